//! TLS to PostgreSQL through the real `hecate` binary: a cluster of the test's own
//! that accepts TCP only over TLS, with a throwaway CA (`openssl`). `sslmode=require`
//! encrypts, `verify-full` with the right `sslrootcert` serves, `verify-ca` checks the
//! signer only; a wrong root, a host the certificate does not name, TLS refused by
//! the server, plain TCP to a TLS-only server and an unreadable root file fail at
//! startup naming the fix, and the password never shows.

use crate::support::common::{Home, text};
use crate::support::http::{Api, serve_args};
use crate::support::postgres::{self, PASSWORD};
use serde_json::json;

/// `hecate --store URL store status` in `home`: its exit code and stderr.
fn status(home: &Home, url: &str) -> (Option<i32>, String) {
    let out = home.run(&["--store", url, "store", "status", "--format", "json"]);
    let (_, stderr) = text(&out);
    assert!(
        !stderr.contains(PASSWORD),
        "the password is never shown: {stderr}"
    );
    (out.status.code(), stderr)
}

#[test]
fn tls_modes_connect_verify_and_refuse_naming_the_fix() {
    let (server, ca) = postgres::private_tls();
    let db = server.create_database();
    let home = Home::empty();
    let by_ip = server.url(&db);
    // The certificate names `localhost`, not 127.0.0.1.
    let by_name = by_ip.replace("@127.0.0.1:", "@localhost:");
    let root = ca.root().display().to_string();
    let other = ca.other_root().display().to_string();

    for ok in [
        format!("{by_ip}?sslmode=require"),
        format!("{by_name}?sslmode=verify-full&sslrootcert={root}"),
        format!("{by_ip}?sslmode=verify-ca&sslrootcert={root}"),
    ] {
        let (code, stderr) = status(&home, &ok);
        assert_eq!(code, Some(0), "{ok}: {stderr}");
    }

    // (url, exit code, what stderr must say)
    let shared = postgres::fresh_database_url();
    let refused = [
        (
            format!("{by_ip}?sslmode=verify-full&sslrootcert={root}"),
            8,
            vec!["not valid for the host 127.0.0.1", "sslmode=verify-ca"],
        ),
        (
            format!("{by_name}?sslmode=verify-full&sslrootcert={other}"),
            8,
            vec![
                "not signed by a root in sslrootcert",
                "Point sslrootcert at the CA",
            ],
        ),
        (
            format!("{by_ip}?sslmode=disable"),
            8,
            vec!["no encryption", "sslmode=require"],
        ),
        (
            format!("{shared}?sslmode=require"),
            8,
            vec!["does not accept TLS connections", "ssl = on"],
        ),
        (
            format!("{by_name}?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"),
            2,
            vec![
                "/nonexistent/ca.pem",
                "Point sslrootcert at a readable PEM file",
            ],
        ),
        (
            format!("{by_name}?sslmode=verify-full"),
            2,
            vec!["names no root certificate", "sslrootcert=PATH"],
        ),
        (
            format!("{by_name}?sslmode=always"),
            2,
            vec!["sslmode=always is not a mode", "verify-full"],
        ),
    ];
    for (url, code, says) in refused {
        let (got, stderr) = status(&home, &url);
        assert_eq!(got, Some(code), "{url}: {stderr}");
        for s in &says {
            assert!(stderr.contains(s), "{url} must say {s:?}: {stderr}");
        }
    }
}

#[tokio::test]
async fn serve_keeps_its_sessions_on_a_server_it_verifies() {
    let (server, ca) = tokio::task::spawn_blocking(postgres::private_tls)
        .await
        .expect("tls cluster");
    let db = server.create_database();
    let url = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        server.url(&db).replace("@127.0.0.1:", "@localhost:"),
        ca.root().display()
    );
    let mut home = Home::empty();
    home.set("PROVIDER_FIX_BASE_URL", "http://127.0.0.1:9/v1");
    let served = serve_args(
        &home,
        &["serve", "--listen", "127.0.0.1:0", "--store", &url],
    );
    let api = Api::new(&served);
    let id = api.create_session(json!({"title": "over tls"})).await;
    // The row is in the database: TLS connections carried it.
    let titles = server.psql(
        &db,
        &format!("SELECT title FROM sessions WHERE id = '{id}'"),
    );
    assert_eq!(titles, "over tls");
    let encrypted = server.psql(
        &db,
        "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) \
         WHERE ssl AND application_name = 'hecate'",
    );
    assert!(
        encrypted.parse::<u32>().is_ok_and(|n| n > 0),
        "serve's pooled connections use TLS: {encrypted}"
    );
}
