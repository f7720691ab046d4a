//! `#[derive(ToJson)]`: writes a type as JSON text exactly as its derived `serde::Serialize`
//! does through `serde_json` (compact), reading the same `#[serde(...)]` attributes, so one
//! definition keeps both in step. The generated code calls `crate::json::out`, so the derive is
//! only for the `cachefold` crate itself.
//!
//! Supported (everything the crate uses; anything else is a compile error, never a silent
//! difference): structs with named fields, newtype and tuple structs, unit structs; enums
//! externally tagged (the default), adjacently tagged (`tag` + `content`) or `untagged`;
//! `rename_all` (`camelCase`, `lowercase`, `kebab-case`, `snake_case`), `rename`,
//! `skip_serializing_if`, `skip`. `serialize_with` needs `#[to_json(with = "path")]` beside it:
//! `path(&field, &mut String)` writes the field's value.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote};
use syn::{parse_macro_input, Data, DeriveInput, Fields, LitStr};

#[derive(Default)]
struct Attrs {
    rename_all: Option<String>,
    rename: Option<String>,
    skip_if: Option<syn::Path>,
    skip: bool,
    tag: Option<String>,
    content: Option<String>,
    untagged: bool,
    serialize_with: bool,
    with: Option<syn::Path>,
}

fn attrs(list: &[syn::Attribute]) -> syn::Result<Attrs> {
    let mut a = Attrs::default();
    for attr in list {
        if attr.path().is_ident("serde") {
            attr.parse_nested_meta(|m| {
                let name = m
                    .path
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                let value = || -> syn::Result<LitStr> { m.value()?.parse() };
                match name.as_str() {
                    "rename_all" => a.rename_all = Some(value()?.value()),
                    "rename" => a.rename = Some(value()?.value()),
                    "skip_serializing_if" => a.skip_if = Some(value()?.parse()?),
                    "skip" | "skip_serializing" => a.skip = true,
                    "tag" => a.tag = Some(value()?.value()),
                    "content" => a.content = Some(value()?.value()),
                    "untagged" => a.untagged = true,
                    "serialize_with" => {
                        value()?;
                        a.serialize_with = true;
                    }
                    // Decoding-only attributes.
                    "default" | "deny_unknown_fields" | "deserialize_with" => {
                        if m.input.peek(syn::Token![=]) {
                            let _: syn::Expr = m.value()?.parse()?;
                        }
                    }
                    other => {
                        return Err(
                            m.error(format!("ToJson: unsupported serde attribute `{other}`"))
                        )
                    }
                }
                Ok(())
            })?;
        } else if attr.path().is_ident("to_json") {
            attr.parse_nested_meta(|m| {
                if m.path.is_ident("with") {
                    let s: LitStr = m.value()?.parse()?;
                    a.with = Some(s.parse()?);
                    Ok(())
                } else {
                    Err(m.error("ToJson: expected `with`"))
                }
            })?;
        }
    }
    Ok(a)
}

/// serde's `rename_all` for a field (`snake_case` source) or a variant (`PascalCase` source).
fn rename(name: &str, rule: Option<&str>, variant: bool) -> syn::Result<String> {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let Some(rule) = rule else {
        return Ok(name.to_string());
    };
    let words: Vec<String> = if variant {
        let mut w: Vec<String> = Vec::new();
        for c in name.chars() {
            if c.is_uppercase() || w.is_empty() {
                w.push(String::new());
            }
            w.last_mut().unwrap().push(c);
        }
        w.into_iter().map(|s| s.to_lowercase()).collect()
    } else {
        name.split('_').map(str::to_string).collect()
    };
    Ok(match rule {
        "lowercase" => name.to_ascii_lowercase(),
        "snake_case" => words.join("_"),
        "kebab-case" => words.join("-"),
        "camelCase" => {
            let mut out = String::new();
            for (i, w) in words.iter().enumerate() {
                if i == 0 {
                    out.push_str(&w.to_lowercase());
                } else {
                    let mut cs = w.chars();
                    if let Some(c) = cs.next() {
                        out.extend(c.to_uppercase());
                        out.push_str(cs.as_str());
                    }
                }
            }
            out
        }
        other => {
            return Err(syn::Error::new(
                Span::call_site(),
                format!("ToJson: unsupported rename_all `{other}`"),
            ))
        }
    })
}

/// Code writing the named fields `(ident, access expression)` as object members; `first` is a
/// `bool` local that is true while nothing was written.
fn members(
    fields: &syn::FieldsNamed,
    rule: Option<&str>,
    access: impl Fn(&syn::Ident) -> TokenStream2,
) -> syn::Result<TokenStream2> {
    let mut out = TokenStream2::new();
    for f in &fields.named {
        let a = attrs(&f.attrs)?;
        if a.skip {
            continue;
        }
        let ident = f.ident.as_ref().unwrap();
        let key = match &a.rename {
            Some(r) => r.clone(),
            None => rename(&ident.to_string(), rule, false)?,
        };
        let v = access(ident);
        let write = match (&a.with, a.serialize_with) {
            (Some(p), _) => quote! { #p(#v, out); },
            (None, true) => {
                return Err(syn::Error::new_spanned(
                    f,
                    "ToJson: serialize_with needs #[to_json(with = \"...\")]",
                ))
            }
            (None, false) => quote! { crate::json::out::ToJson::write_json(#v, out); },
        };
        let one = quote! {
            crate::json::out::key(out, first, #key);
            first = false;
            #write
        };
        out.extend(match &a.skip_if {
            Some(p) => quote! { if !#p(#v) { #one } },
            None => one,
        });
    }
    Ok(out)
}

fn expand(input: DeriveInput) -> syn::Result<TokenStream2> {
    let name = &input.ident;
    let (ig, tg, wc) = input.generics.split_for_impl();
    let top = attrs(&input.attrs)?;
    let rule = top.rename_all.as_deref();
    let body = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(f) => {
                let m = members(f, rule, |i| quote! { &self.#i })?;
                quote! {
                    out.push('{');
                    let mut first = true;
                    #m
                    let _ = first;
                    out.push('}');
                }
            }
            Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                quote! { crate::json::out::ToJson::write_json(&self.0, out); }
            }
            Fields::Unnamed(f) => {
                let idx = (0..f.unnamed.len()).map(syn::Index::from);
                quote! {
                    out.push('[');
                    #( if #idx != 0 { out.push(','); } crate::json::out::ToJson::write_json(&self.#idx, out); )*
                    out.push(']');
                }
            }
            Fields::Unit => quote! { out.push_str("null"); },
        },
        Data::Enum(e) => {
            let mut arms = TokenStream2::new();
            for v in &e.variants {
                let va = attrs(&v.attrs)?;
                let vi = &v.ident;
                let vname = match &va.rename {
                    Some(r) => r.clone(),
                    None => rename(&vi.to_string(), rule, true)?,
                };
                // The variant's content: (pattern, code writing the content value).
                let (pat, content) = match &v.fields {
                    Fields::Unit => (quote! { #name::#vi }, None),
                    Fields::Unnamed(f) if f.unnamed.len() == 1 => (
                        quote! { #name::#vi(x0) },
                        Some(quote! { crate::json::out::ToJson::write_json(x0, out); }),
                    ),
                    Fields::Unnamed(f) => {
                        let xs: Vec<_> = (0..f.unnamed.len())
                            .map(|i| format_ident!("x{i}"))
                            .collect();
                        let idx = 0..xs.len();
                        (
                            quote! { #name::#vi(#(#xs),*) },
                            Some(quote! {
                                out.push('[');
                                #( if #idx != 0 { out.push(','); } crate::json::out::ToJson::write_json(#xs, out); )*
                                out.push(']');
                            }),
                        )
                    }
                    Fields::Named(f) => {
                        let ids: Vec<_> =
                            f.named.iter().map(|f| f.ident.clone().unwrap()).collect();
                        // Variant fields follow the variant's own rename_all, not the enum's.
                        let m = members(f, va.rename_all.as_deref(), |i| quote! { #i })?;
                        (
                            quote! { #name::#vi { #(#ids),* } },
                            Some(quote! {
                                out.push('{');
                                let mut first = true;
                                #m
                                let _ = first;
                                out.push('}');
                            }),
                        )
                    }
                };
                let write = if top.untagged {
                    content.unwrap_or_else(|| quote! { out.push_str("null"); })
                } else if let Some(tag) = &top.tag {
                    let Some(cname) = &top.content else {
                        return Err(syn::Error::new_spanned(
                            &input.ident,
                            "ToJson: internally tagged enums are not supported",
                        ));
                    };
                    let c =
                        content.map(|c| quote! { crate::json::out::key(out, false, #cname); #c });
                    quote! {
                        out.push('{');
                        crate::json::out::key(out, true, #tag);
                        crate::json::out::string(out, #vname);
                        #c
                        out.push('}');
                    }
                } else {
                    match content {
                        None => quote! { crate::json::out::string(out, #vname); },
                        Some(c) => quote! {
                            out.push('{');
                            crate::json::out::key(out, true, #vname);
                            #c
                            out.push('}');
                        },
                    }
                };
                arms.extend(quote! { #pat => { #write } });
            }
            if e.variants.is_empty() {
                quote! { match *self {} }
            } else {
                quote! { match self { #arms } }
            }
        }
        Data::Union(_) => {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "ToJson: unions are not supported",
            ))
        }
    };
    Ok(quote! {
        impl #ig crate::json::out::ToJson for #name #tg #wc {
            #[allow(unused_variables, unused_mut, clippy::needless_borrow)]
            fn write_json(&self, out: &mut String) {
                #body
            }
        }
    })
}

/// The JSON writer of a type; see the crate docs.
#[proc_macro_derive(ToJson, attributes(to_json))]
pub fn derive_to_json(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(input)
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}
