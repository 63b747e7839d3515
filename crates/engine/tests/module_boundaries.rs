//! The engine's use-case modules stay apart: no circle of imports between
//! them, none reaching into another's private files, none reading the
//! system clock. Read from the source, so a change that breaks a boundary
//! fails here, not months later as a 15-file circle nobody can untangle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The use cases: each one a service, depending on others only through
/// what they re-export at their root.
const USE_CASES: &[&str] = &[
    "accounts",
    "approvals",
    "assistant",
    "demo",
    "execution",
    "gateway",
    "orders",
    "policies",
    "proposals",
    "settings",
    "widget",
    "work",
];

struct Source {
    /// Path under `src/`, e.g. `proposals/submit.rs`.
    file: String,
    /// The top-level module it belongs to, e.g. `proposals`.
    module: String,
    /// Code without comments and without its `#[cfg(test)]` tail.
    code: String,
}

fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files
        .into_iter()
        .map(|path| {
            let file = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let module = file
                .split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text.split("#[cfg(test)]").next().unwrap_or_default();
            let code = text
                .lines()
                .map(|line| line.split("//").next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            Source { file, module, code }
        })
        .collect()
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// Every `crate::a::b::c` path in the code, as its segments (grouped
/// imports `crate::{a::b, c}` included).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                paths.push(segments(item.trim()));
            }
        } else {
            paths.push(segments(rest));
        }
    }
    paths.retain(|path| !path.is_empty());
    paths
}

fn segments(text: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        segments.push(rest[..end].to_owned());
        match rest[end..].strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    segments
}

/// Whether `module/name` is one of the module's own files (private to it).
fn is_inner_file(module: &str, name: &str) -> bool {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(module);
    src.join(format!("{name}.rs")).exists() || src.join(name).join("mod.rs").exists()
}

fn is_use_case(module: &str) -> bool {
    USE_CASES.contains(&module)
}

#[test]
fn use_case_modules_never_import_each_other_in_a_circle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for source in sources().iter().filter(|s| is_use_case(&s.module)) {
        for path in crate_paths(&source.code) {
            if is_use_case(&path[0]) && path[0] != source.module {
                graph
                    .entry(source.module.clone())
                    .or_default()
                    .insert(path[0].clone());
            }
        }
    }
    let mut circles = Vec::new();
    for start in graph.keys() {
        // Depth-first from each module: reaching it again is a circle.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((module, trail)) = stack.pop() {
            for next in graph.get(&module).into_iter().flatten() {
                if next == start {
                    let mut circle = trail.clone();
                    circle.push(next.clone());
                    circles.push(circle.join(" -> "));
                } else if seen.insert(next.clone()) {
                    let mut longer = trail.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "use cases import each other in a circle (depend on a service or a port instead):\n{}\ngraph: {graph:#?}",
        circles.join("\n")
    );
}

#[test]
fn a_use_case_never_imports_another_use_cases_private_files() {
    let mut reaches = Vec::new();
    for source in sources() {
        if source.module == "core" || source.module == "lib" {
            // The composition root builds every service, batches included.
            continue;
        }
        for path in crate_paths(&source.code) {
            let [module, inner, ..] = path.as_slice() else {
                continue;
            };
            if !is_use_case(module) || *module == source.module || !is_inner_file(module, inner) {
                continue;
            }
            reaches.push(format!("{} uses crate::{}", source.file, path.join("::")));
        }
    }
    reaches.sort();
    reaches.dedup();
    assert!(
        reaches.is_empty(),
        "import only what a use case re-exports at its root (its service, its types):\n{}",
        reaches.join("\n")
    );
}

#[test]
fn no_use_case_depends_on_the_whole_engine() {
    let mut holders = BTreeSet::new();
    for source in sources() {
        if matches!(source.module.as_str(), "core" | "lib") {
            continue;
        }
        let names_engine = crate_paths(&source.code)
            .iter()
            .any(|path| path.len() >= 2 && path[0] == "core" && path[1] == "Engine")
            || (source.code.contains("use crate::core::{") && source.code.contains("Engine"));
        if names_engine {
            holders.insert(source.file);
        }
    }
    assert!(
        holders.is_empty(),
        "these hold the whole engine; give them a service with only what they use:\n{holders:#?}"
    );
}

#[test]
fn use_cases_read_the_time_from_their_injected_clock() {
    let mut readers = BTreeSet::new();
    for source in sources() {
        for system_time in ["crate::now()", "Utc::now()", "chrono::Utc::now"] {
            if source.code.contains(system_time)
                && source.file != "clock.rs"
                && source.file != "lib.rs"
            {
                readers.insert(format!("{} calls {system_time}", source.file));
            }
        }
    }
    assert!(
        readers.is_empty(),
        "read the time from the service's Clock (tests move a ManualClock):\n{readers:#?}"
    );
}

#[test]
fn the_assistants_tools_reach_the_application_only_through_their_port() {
    let holders: Vec<String> = sources()
        .into_iter()
        .filter(|s| s.file.starts_with("assistant/tools/") || s.file == "assistant/scope.rs")
        .filter(|s| s.code.contains("Engine") || s.code.contains("crate::core::Engine"))
        .map(|s| s.file)
        .collect();
    assert!(
        holders.is_empty(),
        "a tool asks the ToolPort (assistant/tools/port.rs), never the engine: {holders:?}"
    );
}

#[test]
fn postgres_notify_and_listen_live_in_storage_not_in_the_engine() {
    let holders: Vec<String> = sources()
        .into_iter()
        .filter(|s| {
            ["sqlx::", "PgListener", "pg_notify", "postgres_pool"]
                .iter()
                .any(|pg| s.code.contains(pg))
        })
        .map(|s| s.file)
        .collect();
    assert!(
        holders.is_empty(),
        "PostgreSQL-specific code belongs in storage (storage::live for NOTIFY): {holders:?}"
    );
}
