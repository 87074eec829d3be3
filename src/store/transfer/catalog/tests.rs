use super::*;
use crate::store::sqlite::migrations;

/// The SQLite schema, table by table: (name, [(column, declared type)]).
fn sqlite_schema() -> Vec<(String, Vec<(String, String)>)> {
    let mut conn = rusqlite::Connection::open_in_memory().expect("open");
    migrations::migrate(&mut conn).expect("migrate");
    let mut names = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' \
             AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .expect("prepare");
    let tables: Vec<String> = names
        .query_map([], |r| r.get(0))
        .expect("tables")
        .collect::<rusqlite::Result<_>>()
        .expect("rows");
    tables
        .into_iter()
        .map(|name| {
            let mut info = conn
                .prepare(&format!("PRAGMA table_info({name})"))
                .expect("info");
            let columns = info
                .query_map([], |r| Ok((r.get(1)?, r.get(2)?)))
                .expect("columns")
                .collect::<rusqlite::Result<_>>()
                .expect("rows");
            (name, columns)
        })
        .collect()
}

#[test]
fn the_catalog_holds_every_sqlite_table_and_column() {
    let schema = sqlite_schema();
    let mut listed: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
    listed.sort_unstable();
    let tables: Vec<&str> = schema.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(listed, tables, "a migration added or dropped a table");
    for (name, columns) in &schema {
        let table = TABLES.iter().find(|t| t.name == name).expect("listed");
        let got: Vec<(&str, &str)> = table
            .columns
            .iter()
            .map(|c| {
                let ty = match c.kind {
                    Kind::Text => "TEXT",
                    Kind::Vector => "BLOB",
                    Kind::Int | Kind::Int4 | Kind::Bool => "INTEGER",
                };
                (c.name, ty)
            })
            .collect();
        let want: Vec<(&str, &str)> = columns
            .iter()
            .map(|(c, ty)| (c.as_str(), ty.as_str()))
            .collect();
        assert_eq!(got, want, "columns of {name}");
    }
}

#[test]
fn every_table_comes_after_the_tables_its_foreign_keys_name() {
    let conn = {
        let mut c = rusqlite::Connection::open_in_memory().expect("open");
        migrations::migrate(&mut c).expect("migrate");
        c
    };
    for (at, table) in TABLES.iter().enumerate() {
        let mut fks = conn
            .prepare(&format!("PRAGMA foreign_key_list({})", table.name))
            .expect("fks");
        let parents: Vec<String> = fks
            .query_map([], |r| r.get(2))
            .expect("rows")
            .collect::<rusqlite::Result<_>>()
            .expect("parents");
        for parent in parents {
            let before = TABLES[..at].iter().any(|t| t.name == parent);
            assert!(before, "{} names {parent}, listed later", table.name);
        }
    }
}
