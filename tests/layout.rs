//! The module layout of README.md ("Layout"), checked on the source:
//! imports between the top-level modules of src/ flow one way (no cycle),
//! and so do imports between the files of each folder (no circle: a type
//! two files share lives in the file it belongs to); nothing below the
//! command line imports `cli` or `commands`, `stats` and `store` import
//! no workload, the rooms a run is built on import none built on them,
//! and no error below the command line is a bare `String`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules its non-test code names
/// through `crate::`.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn module_of(rel: &Path) -> String {
    let first = rel.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_string()
}

/// The code before the first `#[cfg(test)]` (tests may import anything).
fn non_test(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |i| &text[..i])
}

fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        // Skip `vmscale::crate::` lookalikes and identifiers ending in "crate".
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[i + 7..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

fn graph(src: &Path) -> Graph {
    let mut g = Graph::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let module = module_of(rel);
            if module == "main" || module == "lib" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let uses = g.entry(module.clone()).or_default();
            uses.extend(
                crate_paths(non_test(&text))
                    .into_iter()
                    .filter(|m| *m != module),
            );
        }
    }
    g
}

/// A cycle through `from`, as the list of modules on it, if there is one.
fn cycle_through(g: &Graph, from: &str) -> Option<Vec<String>> {
    let mut stack: Vec<Vec<String>> = vec![vec![from.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap();
        for next in g.get(last).into_iter().flatten() {
            if next == from {
                let mut c = path.clone();
                c.push(next.clone());
                return Some(c);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push(p);
            }
        }
    }
    None
}

/// The names `code` reaches through `super::` at the first level: `a` in
/// `super::a::f` and `a`, `b` in `super::{a::f, b}`.
fn super_paths(code: &str) -> BTreeSet<String> {
    let ident = |t: &str| -> String {
        t.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("super::") {
        let rest = &code[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 0 => {
                        out.insert(ident(&group[j..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// Every circle of `g`: each group of two or more modules that all reach
/// one another (a strongly connected component), sorted.
fn circles(g: &Graph) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for next in g.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = g.keys().map(|m| (m, reach(m))).collect();
    let mut out: BTreeSet<BTreeSet<String>> = BTreeSet::new();
    for (m, from_m) in &reaches {
        let circle: BTreeSet<String> = from_m
            .iter()
            .filter(|o| reaches.get(o).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        if circle.len() > 1 {
            out.insert(circle);
        }
    }
    out.into_iter().collect()
}

/// Per folder module of src/ (DIR/mod.rs, or DIR.rs beside DIR/), the
/// graph of its files: which sibling each file names through `super::`
/// or `crate::DIR::`.
fn sibling_graphs(src: &Path) -> BTreeMap<String, Graph> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.extend(entries.iter().filter(|p| p.is_dir()).cloned());
        if !dir.join("mod.rs").exists() && !dir.with_extension("rs").exists() {
            continue;
        }
        let name_of = |p: &Path| p.file_stem().unwrap().to_string_lossy().to_string();
        let siblings: BTreeSet<String> = entries
            .iter()
            .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
            .map(|p| name_of(p))
            .filter(|n| n != "mod")
            .collect();
        let dir_path = dir
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        let mut g = Graph::new();
        for file in entries
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        {
            let me = name_of(file);
            if me == "mod" {
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            let code = non_test(&text);
            let mut uses = super_paths(code);
            let own = format!("crate::{dir_path}::");
            for (i, _) in code.match_indices(&own) {
                let name: String = code[i + own.len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                uses.insert(name);
            }
            let uses = uses
                .into_iter()
                .filter(|u| siblings.contains(u) && *u != me)
                .collect();
            g.insert(me, uses);
        }
        out.insert(dir_path, g);
    }
    out
}

fn source_graph() -> Graph {
    graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn the_scanner_sees_imports_and_ignores_tests() {
    let code = "use crate::store::Store;\nfn f() { crate::stats::x(); }\n\
                #[cfg(test)]\nmod tests { use crate::cli; }";
    let found = crate_paths(non_test(code));
    assert_eq!(
        found,
        ["stats", "store"].iter().map(|s| s.to_string()).collect()
    );
    let g = source_graph();
    assert!(g.len() > 10, "modules found: {:?}", g.keys());
    assert!(g["commands"].contains("runner"), "{:?}", g["commands"]);
}

#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(cycle_through(&g, "a"), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        cycle_through(&g, "a"),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn imports_between_top_level_modules_have_no_cycle() {
    let g = source_graph();
    let cycles: Vec<String> = g
        .keys()
        .filter_map(|m| cycle_through(&g, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}

#[test]
fn super_paths_reads_single_and_grouped_imports() {
    let code = "use super::run::{plan, emit};\nuse super::{quick, Error, store::{x, y}};\n\
                fn f() { super::show::g(); }";
    let found: Vec<String> = super_paths(code).into_iter().collect();
    assert_eq!(found, ["Error", "quick", "run", "show", "store"]);
}

#[test]
fn the_circle_finder_finds_planted_circles_only() {
    let mut g = Graph::new();
    let arrow = |g: &mut Graph, a: &str, b: &str| {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    };
    // A chain and a fork meeting again: arrows, but no circle.
    for (a, b) in [("a", "b"), ("b", "c"), ("a", "c"), ("d", "e")] {
        arrow(&mut g, a, b);
    }
    assert!(circles(&g).is_empty(), "{:?}", circles(&g));
    // Two planted circles, one of three files and one of two.
    arrow(&mut g, "c", "a");
    arrow(&mut g, "e", "d");
    arrow(&mut g, "e", "f");
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(circles(&g), vec![set(&["a", "b", "c"]), set(&["d", "e"])]);
}

/// The files of one folder import one another one way: a type or helper
/// two files share lives in the one it belongs to (commands' run.rs and
/// quick.rs, machine's snapshot and topology, a workload and its `_args`
/// file had circles).
#[test]
fn files_inside_a_folder_import_each_other_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graphs = sibling_graphs(&src);
    for dir in ["commands", "guest", "machine", "store", "workload"] {
        assert!(
            graphs.contains_key(dir),
            "{dir} not seen: {:?}",
            graphs.keys()
        );
    }
    // The scanner sees imports between files, as `super::` and `crate::`.
    assert!(
        graphs["commands"].values().any(|u| !u.is_empty()),
        "no import between the files of commands/ was seen"
    );
    let found: Vec<String> = graphs
        .iter()
        .flat_map(|(dir, g)| {
            circles(g).into_iter().map(move |c| {
                let files: Vec<String> = c.into_iter().collect();
                format!("{}/: {}", dir.replace("::", "/"), files.join(" <-> "))
            })
        })
        .collect();
    assert!(
        found.is_empty(),
        "import circles inside folders: {found:#?}"
    );
}

#[test]
fn only_the_command_line_imports_cli_and_commands() {
    let g = source_graph();
    let wrong: Vec<String> = g
        .iter()
        .filter(|(m, _)| *m != "commands")
        .flat_map(|(m, uses)| {
            uses.iter()
                .filter(|u| *u == "commands" || *u == "cli")
                .map(move |u| format!("{m} imports {u}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn stats_and_store_import_no_workload() {
    let g = source_graph();
    for m in ["stats", "store"] {
        let uses = &g[m];
        assert!(
            !uses.contains("workload") && !uses.contains("runner"),
            "{m} imports {uses:?}"
        );
    }
}

/// The rooms a run is built on import none of the rooms built on them
/// (setup once read process start times through `store`).
#[test]
fn lower_rooms_import_no_higher_one() {
    let g = source_graph();
    let higher = [
        "workload",
        "runner",
        "store",
        "report",
        "guest",
        "bisect",
        "reproduce",
        "history",
        "commands",
        "cli",
    ];
    let lower = [
        "error",
        "units",
        "parse",
        "text",
        "timefmt",
        "atomic_file",
        "state_dir",
        "machine",
        "exec",
        "monitor",
        "knobs",
        "setup",
    ];
    let wrong: Vec<String> = lower
        .iter()
        .flat_map(|m| {
            let uses = g.get(*m).unwrap_or_else(|| panic!("no room {m}"));
            higher
                .iter()
                .filter(|h| uses.contains(**h))
                .map(move |h| format!("{m} imports {h}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The error type of each `Result<T, E>` written in `code` whose `E` is
/// `String` (a message with no kind, so no exit code by meaning).
fn string_errors(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("Result<") {
        let rest = &code[i + "Result<".len()..];
        let (mut depth, mut last_arg) = (0usize, 0usize);
        for (j, c) in rest.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => last_arg = j + 1,
                '>' if depth == 0 => {
                    if last_arg > 0 && rest[last_arg..j].trim() == "String" {
                        out.push(format!("Result<{}>", &rest[..j]));
                    }
                    break;
                }
                '>' => depth -= 1,
                _ => {}
            }
        }
    }
    out
}

#[test]
fn string_errors_are_seen_in_any_spelling() {
    let code = "fn a() -> Result<(), String> {}\n\
                fn b() -> std::result::Result<Vec<(u8, u8)>, String> {}\n\
                fn c() -> Result<BTreeMap<String, String>> {}\n\
                fn d() -> Result<String, Error> {}";
    assert_eq!(
        string_errors(code),
        ["Result<(), String>", "Result<Vec<(u8, u8)>, String>"]
    );
}

/// Errors are typed (CONTRIBUTING.md, "Errors"): only the command line's
/// edge, main.rs and cli.rs (clap's value parsers), returns a bare
/// `String` as an error.
#[test]
fn no_string_errors_below_the_command_line() {
    let mut found = Vec::new();
    for (rel, text) in source_files() {
        if rel == Path::new("main.rs") || rel == Path::new("cli.rs") {
            continue;
        }
        for e in string_errors(&text) {
            found.push(format!("{}: {e}", rel.display()));
        }
    }
    assert!(
        found.is_empty(),
        "Result<_, String> outside main.rs and cli.rs: {found:#?}"
    );
}

/// Every .rs file below src/: its path there and its text.
fn source_files() -> Vec<(std::path::PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.strip_prefix(&src).unwrap().to_path_buf(), text));
            }
        }
    }
    out
}

/// The command-line options declared in `code` (clap `#[arg(long ...)]`
/// fields): each one's long name and help text (its doc comment).
fn option_declarations(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut doc, mut attrs, mut open) = (Vec::new(), String::new(), 0i32);
    for line in code.lines().map(str::trim) {
        if open > 0 || line.starts_with("#[") {
            open += line.matches('[').count() as i32 - line.matches(']').count() as i32;
            attrs.push_str(line);
            attrs.push(' ');
            continue;
        }
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim());
            continue;
        }
        let field = line.strip_prefix("pub ").unwrap_or(line);
        let name: String = field
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let is_field = !name.is_empty() && field[name.len()..].starts_with(':');
        if is_field && attrs.contains("#[arg(") {
            let long = match attrs.split_once("long = \"") {
                Some((_, rest)) => rest.split('"').next().map(str::to_string),
                None => attrs
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == "long")
                    .then(|| name.replace('_', "-")),
            };
            if let Some(long) = long {
                out.push((long, doc.join(" ")));
            }
        }
        (doc, attrs) = (Vec::new(), String::new());
    }
    out
}

#[test]
fn option_declarations_are_read_with_their_help() {
    let code = "pub struct A {\n    /// JSON instead of text\n    #[arg(long = \"json\")]\n    \
                pub json: bool,\n    /// The most rounds\n    #[arg(long, value_name = \"N\",\n          \
                value_parser = clap::value_parser!(u32).range(2..=100))]\n    \
                pub max_rounds: Option<u32>,\n    /// Not an option\n    pub plain: u8,\n    \
                #[command(flatten)]\n    pub boot: Boot,\n}";
    assert_eq!(
        option_declarations(code),
        [
            ("json".to_string(), "JSON instead of text".to_string()),
            ("max-rounds".to_string(), "The most rounds".to_string())
        ]
    );
}

/// An option several commands share is declared once (a struct they
/// flatten: `options::Json`, `guest::options::BootOptions`), never copied:
/// no two declarations in src/ give one long name the same help, and
/// `--json` is declared once only (a command words its help by `mut_arg`).
#[test]
fn shared_options_are_declared_once() {
    let mut seen: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (rel, text) in source_files() {
        for decl in option_declarations(non_test(&text)) {
            seen.entry(decl)
                .or_default()
                .push(rel.display().to_string());
        }
    }
    let json: Vec<_> = seen
        .iter()
        .filter(|((long, _), _)| long == "json")
        .collect();
    assert_eq!(json.len(), 1, "--json declared more than once: {json:#?}");
    assert_eq!(
        json[0].1.len(),
        1,
        "--json declared more than once: {json:#?}"
    );
    for boot in ["cpus", "mem", "accel", "cpu", "append", "setup", "decide"] {
        assert!(
            seen.iter()
                .any(|((long, _), files)| long == boot && files == &["guest/options.rs"]),
            "--{boot} is not declared in guest/options.rs alone: {seen:#?}"
        );
    }
    let copied: Vec<_> = seen.iter().filter(|(_, files)| files.len() > 1).collect();
    assert!(copied.is_empty(), "options declared twice: {copied:#?}");
}

/// The files of tests/ (names without `.rs`, all.rs left out) that are
/// neither a module of tests/all.rs (`mod NAME;`) nor a `[[test]]` of
/// their own in Cargo.toml, or are both: with `autotests = false` an
/// unlisted file would never be built or run.
fn unlisted_test_files(files: &[String], all_rs: &str, cargo_toml: &str) -> Vec<String> {
    let modules: BTreeSet<&str> = all_rs
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let targets: BTreeSet<&str> = cargo_toml
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("path = \"tests/")?
                .strip_suffix(".rs\"")
        })
        .collect();
    files
        .iter()
        .filter(|f| modules.contains(f.as_str()) == targets.contains(f.as_str()))
        .cloned()
        .collect()
}

#[test]
fn the_test_file_check_finds_planted_strays() {
    let files: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
    let all_rs = "//! x\nmod common;\nmod a;\nmod d;\n";
    let cargo = "[[test]]\nname = \"b\"\npath = \"tests/b.rs\"\n\
                 [[test]]\nname = \"d\"\npath = \"tests/d.rs\"\n";
    assert_eq!(unlisted_test_files(&files, all_rs, cargo), ["c", "d"]);
}

/// Every tests/NAME.rs is built and run: a module of tests/all.rs or,
/// where a real reason needs it, a test binary of its own (Cargo.toml).
#[test]
fn every_test_file_is_in_the_test_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<String> = std::fs::read_dir(root.join("tests"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().ok()?;
            let stem = name.strip_suffix(".rs")?.to_string();
            (stem != "all").then_some(stem)
        })
        .collect();
    assert!(files.len() > 10, "{files:?}");
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let strays = unlisted_test_files(&files, &read("tests/all.rs"), &read("Cargo.toml"));
    assert!(
        strays.is_empty(),
        "tests/NAME.rs neither in tests/all.rs (`mod NAME;`) nor a \
         [[test]] of Cargo.toml, or both: {strays:?}"
    );
}
