//! Generated projects for the live LSP benchmarks (`bin/live-lsp.rs`):
//! deterministic, written into a directory the caller owns.
//!
//! - Python: `packages` × `modules` modules (`pkgNN/modNN.py`), each
//!   importing `shared_helper` from `core/helpers.py` and calling it, every
//!   third one using `core/records.py`'s `Record` too, and each importing
//!   and calling the functions of two earlier modules (no cycles).
//! - C: `modules` files (`src/modNNN.c`, each with its header), each
//!   calling `common_add` of `include/common.h` twice and the functions of
//!   two earlier modules; a `compile_commands.json` lists them all.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// A symbol to ask about: where one of its uses is (0-based, as LSP
/// counts; ASCII, so characters are the same in every encoding) and how
/// many references to it a complete answer has (its declarations too).
#[derive(Clone, Debug)]
pub struct Symbol {
    /// Its name.
    pub name: &'static str,
    /// The file of the use asked at.
    pub file: PathBuf,
    /// The use's line, 0-based.
    pub line: u32,
    /// The use's first character, 0-based.
    pub character: u32,
    /// References in a complete answer.
    pub references: usize,
}

/// A generated project.
#[derive(Clone, Debug)]
pub struct Project {
    /// Its root directory.
    pub root: PathBuf,
    /// How many source files it has.
    pub files: usize,
    /// The file the editor opens.
    pub open: PathBuf,
    /// The symbol used in every module.
    pub widely_used: Symbol,
    /// Another symbol, used in fewer modules.
    pub other: Symbol,
}

/// Where a module's two imports come from: two earlier modules.
fn imports_of(k: usize) -> Vec<usize> {
    let mut from: Vec<usize> = [(k * 7 + 3) % k.max(1), (k * 13 + 5) % k.max(1)]
        .into_iter()
        .filter(|&j| j < k)
        .collect();
    from.dedup();
    from
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)
}

/// The Python module `k` of `modules` per package: its path under the
/// root and its text.
fn python_module(k: usize, modules: usize) -> (String, String) {
    let (package, module) = (k / modules, k % modules);
    let mut text = format!("\"\"\"Module {k}.\"\"\"\nfrom core.helpers import shared_helper\n");
    let uses_record = k.is_multiple_of(3);
    if uses_record {
        text.push_str("from core.records import Record\n");
    }
    let imports = imports_of(k);
    for &j in &imports {
        let _ = writeln!(
            text,
            "from pkg{:02}.mod{:02} import func_{j}",
            j / modules,
            j % modules
        );
    }
    let _ = write!(
        text,
        "\n\nclass Widget{k}:\n    def __init__(self, size: int) -> None:\n        self.size = size\n\n    \
         def grow(self, by: int) -> int:\n        return self.size + by\n\n\n\
         def func_{k}(value: int) -> int:\n    total = shared_helper(value)\n"
    );
    for &j in &imports {
        let _ = writeln!(text, "    total += func_{j}(total)");
    }
    if uses_record {
        text.push_str("    total += Record(total).weight()\n");
    }
    text.push_str("    return total\n");
    (format!("pkg{package:02}/mod{module:02}.py"), text)
}

/// Writes the Python project of `packages` × `modules` modules under
/// `root`.
pub fn python(root: &Path, packages: usize, modules: usize) -> io::Result<Project> {
    write(&root.join("core/__init__.py"), "")?;
    write(
        &root.join("core/helpers.py"),
        "\"\"\"Helpers every module uses.\"\"\"\n\n\ndef shared_helper(value: int) -> int:\n    \
         \"\"\"The value, one more.\"\"\"\n    return value + 1\n",
    )?;
    write(
        &root.join("core/records.py"),
        "\"\"\"A record.\"\"\"\n\n\nclass Record:\n    def __init__(self, weight: int) -> None:\n        \
         self._weight = weight\n\n    def weight(self) -> int:\n        return self._weight\n",
    )?;
    let total = packages * modules;
    for package in 0..packages {
        write(&root.join(format!("pkg{package:02}/__init__.py")), "")?;
    }
    for k in 0..total {
        let (path, text) = python_module(k, modules);
        write(&root.join(path), &text)?;
    }
    // A module that uses both, in the middle of the project.
    let k = (total / 2) / 3 * 3;
    let (open, text) = python_module(k, modules);
    let open = root.join(open);
    let find = |needle: &str| position(&text, needle);
    let (line, character) = find("shared_helper(value)");
    let widely_used = Symbol {
        name: "shared_helper",
        file: open.clone(),
        line,
        character,
        // The definition; in each module, the import and the call.
        references: 1 + 2 * total,
    };
    let (line, character) = find("Record(total)");
    let other = Symbol {
        name: "Record",
        file: open.clone(),
        line,
        character,
        references: 1 + 2 * total.div_ceil(3),
    };
    Ok(Project {
        root: root.to_owned(),
        files: 3 + packages + total,
        open,
        widely_used,
        other,
    })
}

/// The C module `k`: its source and header.
fn c_module(k: usize) -> (String, String) {
    let imports = imports_of(k);
    let mut source = String::from("#include \"common.h\"\n");
    for &j in &imports {
        let _ = writeln!(source, "#include \"mod{j:03}.h\"");
    }
    let _ = write!(
        source,
        "#include \"mod{k:03}.h\"\n\nint mod_{k:03}(int value) {{\n  struct record r = {{{k}, value}};\n  \
         int total = common_add(value, {k});\n"
    );
    for &j in &imports {
        let _ = writeln!(source, "  total += mod_{j:03}(total);");
    }
    source.push_str("  total = common_add(total, record_weight(&r));\n  return total;\n}\n");
    let header = format!(
        "#ifndef MOD{k:03}_H\n#define MOD{k:03}_H\n\nint mod_{k:03}(int value);\n\n#endif\n"
    );
    (source, header)
}

/// Writes the C project of `modules` modules under `root`.
pub fn c(root: &Path, modules: usize) -> io::Result<Project> {
    write(
        &root.join("include/common.h"),
        "#ifndef COMMON_H\n#define COMMON_H\n\nstruct record {\n  int id;\n  int weight;\n};\n\n\
         int common_add(int a, int b);\nint record_weight(const struct record *r);\n\n#endif\n",
    )?;
    write(
        &root.join("src/common.c"),
        "#include \"common.h\"\n\nint common_add(int a, int b) { return a + b; }\n\n\
         int record_weight(const struct record *r) { return r->weight; }\n",
    )?;
    let mut commands = Vec::with_capacity(modules + 1);
    let mut entry = |file: String| {
        commands.push(serde_json::json!({
            "directory": root,
            "file": root.join(&file),
            "arguments": ["cc", "-Iinclude", "-c", file],
        }));
    };
    entry("src/common.c".to_owned());
    for k in 0..modules {
        let (source, header) = c_module(k);
        write(&root.join(format!("src/mod{k:03}.c")), &source)?;
        write(&root.join(format!("include/mod{k:03}.h")), &header)?;
        entry(format!("src/mod{k:03}.c"));
    }
    write(
        &root.join("compile_commands.json"),
        &serde_json::Value::Array(commands).to_string(),
    )?;
    let k = modules / 2;
    let open = root.join(format!("src/mod{k:03}.c"));
    let (source, _) = c_module(k);
    let (line, character) = position(&source, "common_add(value");
    let widely_used = Symbol {
        name: "common_add",
        file: open.clone(),
        line,
        character,
        // Declaration and definition; two calls in each module.
        references: 2 + 2 * modules,
    };
    let (line, character) = position(&source, "record_weight(&r)");
    let other = Symbol {
        name: "record_weight",
        file: open.clone(),
        line,
        character,
        references: 2 + modules,
    };
    Ok(Project {
        root: root.to_owned(),
        files: 2 * modules + 2,
        open,
        widely_used,
        other,
    })
}

/// The 0-based line and character of the first `needle` in `text`.
fn position(text: &str, needle: &str) -> (u32, u32) {
    let at = text.find(needle).expect("the generator wrote it");
    let before = &text[..at];
    let line = before.matches('\n').count();
    let character = at - before.rfind('\n').map_or(0, |n| n + 1);
    (line as u32, character as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Occurrences of `name` as a whole word in every file under `dir`.
    fn occurrences(dir: &Path, name: &str) -> usize {
        let mut count = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                count += occurrences(&path, name);
            } else if path.extension().is_some_and(|e| e != "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                count += text
                    .match_indices(name)
                    .filter(|(at, _)| {
                        let word = |c: char| c.is_alphanumeric() || c == '_';
                        let before = text[..*at].chars().next_back().is_none_or(|c| !word(c));
                        let after = text[at + name.len()..]
                            .chars()
                            .next()
                            .is_none_or(|c| !word(c));
                        before && after
                    })
                    .count();
            }
        }
        count
    }

    #[test]
    fn the_counted_references_are_the_names_written() {
        let dir = std::env::temp_dir().join(format!("ide-mcp-projects-{}", std::process::id()));
        let python = python(&dir.join("py"), 3, 10).unwrap();
        let c = c(&dir.join("c"), 12).unwrap();
        for symbol in [&python.widely_used, &python.other, &c.widely_used, &c.other] {
            assert_eq!(
                occurrences(symbol.file.ancestors().nth(2).unwrap(), symbol.name),
                symbol.references,
                "{}",
                symbol.name
            );
            let text = std::fs::read_to_string(&symbol.file).unwrap();
            let line = text.lines().nth(symbol.line as usize).unwrap();
            assert!(line[symbol.character as usize..].starts_with(symbol.name));
        }
        assert_eq!(python.files, 3 + 3 + 30);
        let again = python_module(15, 10);
        assert_eq!(
            std::fs::read_to_string(dir.join("py").join(&again.0)).unwrap(),
            again.1
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
