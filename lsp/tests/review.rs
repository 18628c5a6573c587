//! Claude's proposed edits under review, as a stream's editor sees them:
//! the hunks of the host's overlay merged into the server's diagnostics and
//! code actions, stripped from code action requests, and the review's
//! commands answered in the server's place.

mod support;

use std::sync::Arc;

use ide_mcp_lsp::observer::Decision;
use ide_mcp_lsp::observer::overlay::{HunkView, Overlay, ReviewView, ViewKind};
use ide_mcp_lsp::{ClientVerdict, LspWorkspace, ServerVerdict, WorkspaceEvent};
use ide_mcp_tools::Agent;
use serde_json::{Value, json};
use support::{Stream, drain, neovim_initialize, range_json};

const A: &str = "file:///ws/a.c";

fn body(verdict: ServerVerdict) -> Value {
    match verdict {
        ServerVerdict::Replace(body) => serde_json::from_slice(&body).unwrap(),
        ServerVerdict::Forward | ServerVerdict::Drop => panic!("forwarded unchanged, or kept"),
    }
}

fn sent(stream: &mut Stream) -> Value {
    let message = stream
        .outgoing
        .try_recv()
        .expect("a message for the editor");
    serde_json::from_slice(message.body()).unwrap()
}

/// Two hunks of review 7, revision 2, on `/ws/a.c`: lines 1-2 replaced,
/// and an insertion before line 4.
fn overlay() -> Overlay {
    Overlay {
        reviews: vec![ReviewView {
            kind: ViewKind::Review,
            agent: Agent::Claude,
            path: "/ws/a.c".into(),
            diff: 7,
            rev: 2,
            hunks: vec![
                HunkView {
                    index: 0,
                    start_line: 1,
                    old_len: 2,
                    message: "Claude: replace 2 lines with 1 — x".into(),
                },
                HunkView {
                    index: 2,
                    start_line: 4,
                    old_len: 0,
                    message: "Claude: insert 1 line — y".into(),
                },
            ],
        }],
    }
}

fn hunk(line: (u32, u32, u32, u32), index: usize, message: &str) -> Value {
    json!({"range": range_json(((line.0, line.1), (line.2, line.3))), "severity": 3, "source": "Claude Code",
           "code": "claude-edit", "message": message, "data": {"ideMcpReview": [7, 2, index]}})
}

fn server_error() -> Value {
    json!({"range": range_json(((0, 0), (0, 3))), "severity": 1, "message": "bad", "source": "clangd"})
}

fn reviewing() -> (Arc<LspWorkspace>, Stream) {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", neovim_initialize("/ws"));
    s.answer(1, json!({"capabilities": {}}));
    s.open(A, "c", 0, "int a;\nint bé;\nint c;\nint d;\nint e;\n");
    s.publish(A, Some(0), json!([server_error()]));
    (ws, s)
}

#[test]
fn hunks_are_published_beside_the_server_s_diagnostics_and_withdrawn_to_them() {
    let (_ws, mut s) = reviewing();
    s.observer.set_review(overlay());
    let hunks = [
        hunk((1, 0, 2, 6), 0, "Claude: replace 2 lines with 1 — x"),
        hunk((4, 0, 4, 0), 2, "Claude: insert 1 line — y"),
    ];
    assert_eq!(
        sent(&mut s),
        json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
               "params": {"uri": A, "version": 0, "diagnostics": [server_error(), hunks[0], hunks[1]]}})
    );
    // The server publishes again: the hunks are merged in.
    let again = s.server(
        json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
        "params": {"uri": A, "version": 0, "diagnostics": []}}),
    );
    assert_eq!(
        body(again)["params"]["diagnostics"],
        json!([hunks[0], hunks[1]])
    );
    // Withdrawn: the server's own, never an empty list over them.
    s.observer.set_review(Overlay::default());
    assert_eq!(sent(&mut s)["params"]["diagnostics"], json!([]));
    s.publish(A, Some(0), json!([server_error()]));
    s.observer.set_review(overlay());
    sent(&mut s);
    s.observer.set_review(Overlay::default());
    assert_eq!(
        sent(&mut s)["params"]["diagnostics"],
        json!([server_error()])
    );
    assert!(s.outgoing.try_recv().is_err());
}

#[test]
fn code_actions_decide_and_claude_s_hunks_never_reach_the_server() {
    let (_ws, mut s) = reviewing();
    s.observer.set_review(overlay());
    sent(&mut s);
    // The editor sends the diagnostics under the cursor: Claude's are
    // stripped, the server's kept.
    let request = s.request(
        2,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": A}, "range": range_json(((2, 1), (2, 1))),
               "context": {"diagnostics": [server_error(), hunk((1, 0, 2, 5), 0, "m")]}}),
    );
    let ClientVerdict::Replace(forwarded) = request else {
        panic!("not stripped: {request:?}")
    };
    let forwarded: Value = serde_json::from_slice(&forwarded).unwrap();
    assert_eq!(
        forwarded,
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction",
               "params": {"textDocument": {"uri": A}, "range": range_json(((2, 1), (2, 1))),
                          "context": {"diagnostics": [server_error()]}}})
    );
    // The answer: the hunk under the range, then all, then ours.
    let answer = body(s.answer(2, json!([])));
    let titles: Vec<&str> = answer["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Claude: accept this change",
            "Claude: reject this change",
            "Claude: accept all 2 changes",
            "Claude: reject all",
            "Send selection to Claude Code"
        ]
    );
    assert_eq!(
        answer["result"][0]["command"],
        json!({"title": "Claude: accept this change", "command": "ide-mcp.review.accept", "arguments": [7, 2, 0]})
    );
    // Elsewhere in the document: only all.
    s.request(
        3,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": A}, "range": range_json(((0, 0), (0, 0))), "context": {"diagnostics": []}}),
    );
    let answer = body(s.answer(3, json!(null)));
    assert_eq!(answer["result"].as_array().unwrap().len(), 3);
}

#[test]
fn commands_are_answered_here_with_the_decided_hunk_gone_first() {
    let (ws, mut s) = reviewing();
    let mut events = ws.subscribe();
    s.observer.set_review(overlay());
    sent(&mut s);
    // Run: answered here, the host decides; the editor is shown the hunk
    // decided gone before the answer.
    drain(&mut events);
    let run = s.request(
        4,
        "workspace/executeCommand",
        json!({"command": "ide-mcp.review.reject", "arguments": [7, 2, 0]}),
    );
    let ClientVerdict::AnswerAll(bodies) = run else {
        panic!("{run:?}")
    };
    let bodies: Vec<Value> = bodies
        .iter()
        .map(|b| serde_json::from_slice(b).unwrap())
        .collect();
    assert_eq!(
        bodies[0]["params"]["diagnostics"],
        json!([
            server_error(),
            hunk((4, 0, 4, 0), 2, "Claude: insert 1 line — y")
        ])
    );
    assert_eq!(
        bodies[1],
        json!({"jsonrpc": "2.0", "id": 4, "result": null})
    );
    assert_eq!(bodies.len(), 2);
    let all = s.request(
        5,
        "workspace/executeCommand",
        json!({"command": "ide-mcp.review.acceptAll", "arguments": [7]}),
    );
    let ClientVerdict::AnswerAll(bodies) = all else {
        panic!("{all:?}")
    };
    let published: Value = serde_json::from_slice(&bodies[0]).unwrap();
    assert_eq!(published["params"]["diagnostics"], json!([server_error()]));
    // The host's overlay, the same decisions made: nothing more to show.
    let mut decided = overlay();
    decided.reviews[0].hunks.clear();
    s.observer.set_review(decided);
    assert!(s.outgoing.try_recv().is_err());
    assert_eq!(
        drain(&mut events),
        [
            WorkspaceEvent::Review(Decision::One {
                diff: 7,
                rev: 2,
                index: 0,
                accept: false
            }),
            WorkspaceEvent::Review(Decision::All {
                diff: 7,
                accept: true
            }),
        ]
    );
}

#[test]
fn a_document_opened_under_review_shows_its_hunks_and_pull_answers_get_them() {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", neovim_initialize("/ws"));
    s.answer(1, json!({"capabilities": {}}));
    s.observer.set_review(overlay());
    assert!(s.outgoing.try_recv().is_err(), "not open yet");
    s.open(A, "c", 0, "int a;\nint b;\nint c;\nint d;\nint e;\n");
    let published = sent(&mut s);
    assert_eq!(
        published["params"]["diagnostics"].as_array().unwrap().len(),
        2
    );
    s.request(
        6,
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": A}}),
    );
    let answer = body(s.answer(
        6,
        json!({"kind": "full", "resultId": "r1", "items": [server_error()]}),
    ));
    assert_eq!(answer["result"]["kind"], "full");
    assert_eq!(answer["result"]["resultId"], Value::Null);
    assert_eq!(answer["result"]["items"].as_array().unwrap().len(), 3);
}

#[test]
fn another_agent_s_review_is_named_after_it() {
    let (_ws, mut s) = reviewing();
    let mut gemini = overlay();
    gemini.reviews[0].agent = Agent::Gemini;
    s.observer.set_review(gemini);
    let published = sent(&mut s);
    assert_eq!(
        published["params"]["diagnostics"][1]["source"],
        json!("Gemini CLI")
    );
    s.request(
        2,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": A}, "range": range_json(((1, 0), (1, 0))),
               "context": {"diagnostics": [published["params"]["diagnostics"][1]]}}),
    );
    let answer = body(s.answer(2, json!([])));
    let titles: Vec<&str> = answer["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Gemini: accept this change",
            "Gemini: reject this change",
            "Gemini: accept all 2 changes",
            "Gemini: reject all",
            "Send selection to Claude Code"
        ]
    );
}
