use cachefold::transcript::parse_auto;
#[test]
fn dbg() {
    let f = "../shared/corpus/claude-code-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";
    let text = std::fs::read_to_string(f).unwrap();
    let t = parse_auto(f, &text).unwrap();
    let asst: Vec<usize> = (0..t.messages.len()).filter(|&i| t.messages[i].role_str()=="assistant").collect();
    let calls: Vec<usize> = t.calls.iter().map(|c| c.assistant_index).collect();
    let extra: Vec<&usize> = asst.iter().filter(|i| !calls.contains(i)).collect();
    println!("assistants={} calls={} extra={:?}", asst.len(), calls.len(), extra);
    for &i in extra.iter().take(3) { println!("{}", &t.messages[*i].to_json()[..300.min(t.messages[*i].to_json().len())]); }
    let users: Vec<usize> = (0..t.messages.len()).filter(|&i| t.messages[i].role_str()=="user").collect();
    println!("users {:?}", users);
}
