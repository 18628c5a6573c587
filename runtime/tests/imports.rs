//! The modules of each crate form a line: no module imports, directly or
//! around a ring, a module that imports it (STYLE.md, "Modules form a
//! line"). Checked for every crate the workspace ships.
//!
//! Read from the source: each file's paths into the crate (`crate::…`,
//! `super::…`, `self::…`, and a child module's name), outside comments and
//! literals, each resolved to the deepest module it names. The crate root
//! is left out: it declares the modules and re-exports their items, and
//! holds nothing they import. (`cargo modules dependencies` draws an impl's
//! methods in their type's module wherever the impl is written, so
//! `impl Server { fn serve_ws }` in `transport::ws` shows there as an edge
//! from `server`; this reads what each file imports.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Checks the sources of every crate of the workspace that ships (the
/// runtime's siblings), or those of `IMPORTS_SRC` alone (a `src` folder).
#[test]
fn no_module_imports_one_that_imports_it() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sources: Vec<std::path::PathBuf> = std::env::var_os("IMPORTS_SRC").map_or_else(
        || {
            ["macros", "runtime", "tools", "lsp", "cli"]
                .iter()
                .map(|name| workspace.join(name).join("src"))
                .collect()
        },
        |src| vec![src.into()],
    );
    for src in sources {
        let graph = imports(&src);
        assert!(graph.len() > 3, "{}: {graph:?}", src.display());
        let rings = rings(&graph);
        assert!(
            rings.is_empty(),
            "{}: modules that import each other: {rings:#?}",
            src.display()
        );
    }
}

#[test]
fn a_ring_is_found() {
    let mut graph = Graph::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph
            .entry(from.to_owned())
            .or_default()
            .insert(to.to_owned());
    }
    assert_eq!(
        rings(&graph),
        [vec![
            "a".to_owned(),
            "b".to_owned(),
            "c".to_owned(),
            "a".to_owned()
        ]]
    );
    let code = strip(
        r#"use crate::a; // crate::b
        let s = "crate::c"; /* crate::d */ let c = '"'; fn f<'a>() { super::e::f() }"#,
    );
    assert_eq!(paths(&code), ["crate::a", "super::e::f"]);
    assert_eq!(
        paths("use super::{x::{self, Y}, z};"),
        ["super::x", "super::x::Y", "super::z"]
    );
}

/// Each module's path (`transport::http`) and the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The import graph of the crate whose sources are in `src`.
fn imports(src: &Path) -> Graph {
    let mut files = Vec::new();
    collect(src, src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut graph = Graph::new();
    for (module, code) in &files {
        let here: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
        let children: Vec<&str> = modules
            .iter()
            .filter_map(|m| m.strip_prefix(module.as_str()))
            .filter_map(|rest| {
                if module.is_empty() {
                    Some(rest)
                } else {
                    rest.strip_prefix("::")
                }
            })
            .filter(|rest| !rest.is_empty() && !rest.contains("::"))
            .collect();
        for path in paths_with(code, &children) {
            let mut segments: Vec<&str> = path.split("::").collect();
            let mut base: Vec<&str> = match segments[0] {
                "crate" => Vec::new(),
                "self" => here.clone(),
                "super" => {
                    let mut base = here.clone();
                    while segments.first() == Some(&"super") {
                        base.pop();
                        segments.remove(0);
                    }
                    segments.insert(0, "super");
                    base
                }
                _ => {
                    // A child module's name.
                    segments.insert(0, "self");
                    here.clone()
                }
            };
            for segment in &segments[1..] {
                let mut deeper = base.clone();
                deeper.push(segment);
                if !modules.contains(&deeper.join("::")) {
                    break;
                }
                base = deeper;
            }
            let target = base.join("::");
            if !target.is_empty() && !module.is_empty() && target != *module {
                graph.entry(module.clone()).or_default().insert(target);
            }
        }
        graph.entry(module.clone()).or_default();
    }
    graph.remove("");
    graph
}

/// Every `.rs` file under `dir` with its module path and its code without
/// comments and literals. A `#[path]`-named module is named by its file.
fn collect(src: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("readable sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(src, &path, files);
            continue;
        }
        // Tests are not part of the line (a `tests.rs` is a test module).
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("tests.rs") {
            continue;
        }
        let relative = path.strip_prefix(src).expect("under src");
        let mut segments: Vec<String> = relative
            .with_extension("")
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
            segments.pop();
        }
        let code = without_tests(&strip(
            &std::fs::read_to_string(&path).expect("a readable source"),
        ));
        files.push((renamed(src, segments).join("::"), code));
    }
}

/// Module paths as the crate names them: a directory given to a module by
/// `#[path = "dir/mod.rs"] mod name;` in the crate root is `name`.
fn renamed(src: &Path, mut segments: Vec<String>) -> Vec<String> {
    let root = std::fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
    let mut lines = root.lines();
    while let Some(line) = lines.next() {
        let Some(dir) = line
            .trim()
            .strip_prefix("#[path = \"")
            .and_then(|rest| rest.strip_suffix("/mod.rs\"]"))
        else {
            continue;
        };
        let declaration = lines.next().unwrap_or_default();
        let name = declaration
            .trim()
            .trim_end_matches(';')
            .rsplit(' ')
            .next()
            .unwrap_or_default();
        if segments.first().is_some_and(|first| first == dir) {
            name.clone_into(&mut segments[0]);
        }
    }
    segments
}

/// `code` with comments, strings and character literals blanked out.
fn strip(code: &str) -> String {
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else if let Some(hashes) = raw_string(rest) {
            let end = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            i += body
                + rest[body..]
                    .find(&end)
                    .map_or(rest.len() - body, |e| e + end.len());
            out.push_str("\"\"");
        } else if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if bytes[i] == b'\'' && char_literal(rest).is_some() {
            i += char_literal(rest).unwrap_or(1);
            out.push_str("' '");
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `code` without its `#[cfg(test)]` modules.
fn without_tests(code: &str) -> String {
    let mut out = code.to_owned();
    while let Some(at) = out.find("#[cfg(test)]") {
        let rest = &out[at..];
        let end = match (rest.find('{'), rest.find(';')) {
            (Some(open), semicolon) if semicolon.is_none_or(|s| open < s) => {
                let mut depth = 0;
                let close = rest[open..].char_indices().find_map(|(i, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    (depth == 0).then_some(open + i + 1)
                });
                close.unwrap_or(rest.len())
            }
            (_, Some(semicolon)) => semicolon + 1,
            _ => rest.len(),
        };
        out.replace_range(at..at + end, "");
    }
    out
}

/// The number of `#` of a raw string starting `text` (`r"`, `r#"`, `br"`).
fn raw_string(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('b').unwrap_or(text).strip_prefix('r')?;
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    rest[hashes..]
        .starts_with('"')
        .then_some(hashes + usize::from(text.starts_with('b')))
}

/// The length of a character literal starting `text`, not a lifetime.
fn char_literal(text: &str) -> Option<usize> {
    let mut chars = text.char_indices().skip(1);
    let (_, first) = chars.next()?;
    if first == '\\' {
        return text[2..].find('\'').map(|end| end + 3);
    }
    let (at, next) = chars.next()?;
    (next == '\'').then_some(at + 1)
}

/// The paths into the crate in `code`: `crate::…`, `super::…`, `self::…`,
/// and every path of a `use` (its braces expanded).
fn paths(code: &str) -> Vec<String> {
    paths_with(code, &[])
}

/// [`paths`], and the paths in code that start with one of `children`.
fn paths_with(code: &str, children: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let boundary = at == 0 || !is_ident(rest.as_bytes()[at - 1]);
        let end = rest[at..].find(';').map_or(rest.len(), |end| at + end);
        if boundary {
            let tree = rest[at + 4..end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let tree = ["::", "{", "}", ","].iter().fold(tree, |tree, sep| {
                tree.replace(&format!(" {sep}"), sep)
                    .replace(&format!("{sep} "), sep)
            });
            expand(&tree, "", &mut found);
        }
        rest = &rest[(at + 4).min(end)..];
    }
    let bytes = code.as_bytes();
    let children = children.iter().map(|child| format!("{child}::"));
    for start in [
        "crate::".to_owned(),
        "super::".to_owned(),
        "self::".to_owned(),
    ]
    .into_iter()
    .chain(children)
    {
        let start = start.as_str();
        let mut from = 0;
        while let Some(at) = code[from..].find(start).map(|at| from + at) {
            from = at + start.len();
            if at > 0 && (is_ident(bytes[at - 1]) || bytes[at - 1] == b':' || bytes[at - 1] == b'$')
            {
                continue;
            }
            if code[..at]
                .rsplit(';')
                .next()
                .is_some_and(|s| s.contains("use "))
            {
                continue; // in a `use`, read above
            }
            let end = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |end| at + end);
            found.push(code[at..end].trim_end_matches(':').to_owned());
        }
    }
    found.retain(|path| !path.starts_with("std::") && !path.starts_with("core::"));
    found
}

/// The paths of the use tree `tree` (no whitespace), each after `prefix`.
fn expand(tree: &str, prefix: &str, found: &mut Vec<String>) {
    let join = |path: &str| {
        if prefix.is_empty() {
            path.to_owned()
        } else if path == "self" {
            prefix.to_owned()
        } else {
            format!("{prefix}::{path}")
        }
    };
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        found.push(join(path.trim_end_matches("::*")));
        return;
    };
    let head = join(tree[..open].trim_end_matches("::"));
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                expand(&inner[start..i], &head, found);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].is_empty() {
        expand(&inner[start..], &head, found);
    }
}

fn is_ident(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Each ring of `graph`, as the modules around it from its first back to it.
fn rings(graph: &Graph) -> Vec<Vec<String>> {
    let mut rings = Vec::new();
    let mut done = BTreeSet::new();
    for start in graph.keys() {
        let mut path = vec![start.clone()];
        find(graph, &mut path, &mut done, &mut rings);
    }
    rings
}

fn find(
    graph: &Graph,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
    rings: &mut Vec<Vec<String>>,
) {
    let here = path.last().expect("a path").clone();
    if done.contains(&here) {
        return;
    }
    for next in graph.get(&here).into_iter().flatten() {
        if let Some(at) = path.iter().position(|m| m == next) {
            let mut ring = path[at..].to_vec();
            ring.push(next.clone());
            rings.push(ring);
        } else {
            path.push(next.clone());
            find(graph, path, done, rings);
            path.pop();
        }
    }
    done.insert(here);
}
