//! wasm-bindgen exports: convert types, call the core, convert back. No logic lives here.
//!
//! Strings cross as `&str`/`String`; structured results cross through one
//! `serde_wasm_bindgen::Serializer::json_compatible()` so JS gets plain objects.
//! Errors become JS `Error`s whose `code` property is [`crate::Error::code`].

use crate::config::Config;
use crate::error::Error;
use serde::Serialize;
use wasm_bindgen::prelude::*;

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| err(&Error::Internal(e.to_string())))
}

fn err(e: &Error) -> JsValue {
    let out = js_sys::Error::new(&e.to_string());
    let _ = js_sys::Reflect::set(&out, &JsValue::from_str("code"), &JsValue::from_str(e.code()));
    out.into()
}

fn parse_config(json: &str) -> Result<Config, JsValue> {
    Config::from_json(json).map_err(|e| err(&e))
}

/// Crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Validate the plugin config (JSON text) and return it with every default filled in.
#[wasm_bindgen(js_name = parseConfig)]
pub fn parse_config_js(json: &str) -> Result<JsValue, JsValue> {
    to_js(&parse_config(json)?)
}

/// Lowercase hex SHA-1 of the UTF-8 bytes of `text`.
#[wasm_bindgen(js_name = sha1Hex)]
pub fn sha1_hex(text: &str) -> String {
    crate::fingerprint_hex(text.as_bytes())
}

/// A directory name for a session id that cannot escape the sessions folder.
#[wasm_bindgen(js_name = sessionDirName)]
pub fn session_dir_name(session_id: &str) -> String {
    crate::safe_name(session_id)
}

/// Parse one message and serialise it back (round-trip check used by tests).
#[wasm_bindgen(js_name = roundTripMessage)]
pub fn round_trip_message(json: &str) -> Result<String, JsValue> {
    crate::Message::from_json(json).map(|m| m.to_json()).map_err(|e| err(&e))
}
