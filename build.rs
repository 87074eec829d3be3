//! Embeds the operator console (`console/`) in the binary: writes a table of its
//! served files, each an `include_bytes!`, to `$OUT_DIR/console_assets.rs`.
//! Cargo reruns this when anything under `console/` changes, so a new or edited
//! file is picked up by the next build.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The file kinds the console serves; anything else in the folder (notes,
/// package files) stays out of the binary.
const SERVED: &[&str] = &["html", "js", "css", "svg", "png", "ico", "woff2"];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("console");
    println!("cargo:rerun-if-changed=console");
    let mut files = Vec::new();
    if root.is_dir() {
        collect(&root, &mut files);
    }
    files.sort();
    let mut table = String::from(
        "/// The console's files: path under `console/` (with `/` separators) and bytes.\n\
         pub static CONSOLE_ASSETS: &[(&str, &[u8])] = &[\n",
    );
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .expect("under console/")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        writeln!(
            table,
            "    ({rel:?}, include_bytes!({:?})),",
            file.display().to_string()
        )
        .expect("write to a String");
    }
    table.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("console_assets.rs"), table).expect("write console_assets.rs");
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "node_modules" {
            continue;
        }
        if path.is_dir() {
            collect(&path, files);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| SERVED.contains(&ext))
        {
            files.push(path);
        }
    }
}
