//! `/healthz`, `/livez` and `/readyz` as kube-apiserver answers them: `ok` when every check
//! passes (`?verbose` lists them as `[+]<check> ok`), 500 listing every check when one
//! fails (`[-]<check> failed: <cause>`, with the cause shown rather than withheld),
//! `/<endpoint>/<check>` for one check, `?exclude=<check>` to skip one.
//!
//! Checks: `ping` (the server answers) and `storage` (the store accepts writes; false once
//! a commit to the durable log failed, until restart).

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// One named check and its outcome.
pub struct Check {
    pub name: &'static str,
    pub result: Result<(), String>,
}

/// The checks of this server, given why the store failed (if it did).
pub fn checks(storage_failure: Option<&str>) -> Vec<Check> {
    vec![
        Check { name: "ping", result: Ok(()) },
        Check {
            name: "storage",
            result: match storage_failure {
                None => Ok(()),
                Some(cause) => Err(format!("the store is read-only since {cause}; restart drydock")),
            },
        },
    ]
}

/// Answers `path` (`readyz`, `livez/storage`, ...) with the query string `query`.
pub fn respond(path: &str, query: Option<&str>, checks: &[Check]) -> Response {
    let mut segs = path.split('/');
    let endpoint = segs.next().unwrap_or("healthz");
    match segs.next() {
        Some(name) if !name.is_empty() => one(name, checks),
        _ => all(endpoint, query, checks),
    }
}

fn one(name: &str, checks: &[Check]) -> Response {
    match checks.iter().find(|c| c.name == name) {
        None => text(StatusCode::NOT_FOUND, "404 page not found\n".into()),
        Some(Check { result: Ok(()), .. }) => text(StatusCode::OK, "ok".into()),
        Some(Check { result: Err(e), .. }) => {
            text(StatusCode::INTERNAL_SERVER_ERROR, format!("internal server error: {e}\n"))
        }
    }
}

fn all(endpoint: &str, query: Option<&str>, checks: &[Check]) -> Response {
    let params: Vec<(String, String)> =
        form_urlencoded::parse(query.unwrap_or("").as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let verbose = params.iter().any(|(k, _)| k == "verbose");
    let mut excluded: Vec<&str> = params.iter().filter(|(k, _)| k == "exclude").map(|(_, v)| v.as_str()).collect();
    let mut out = String::new();
    let mut failed = false;
    for c in checks {
        if let Some(i) = excluded.iter().position(|e| *e == c.name) {
            excluded.swap_remove(i);
            out.push_str(&format!("[+]{} excluded: ok\n", c.name));
            continue;
        }
        match &c.result {
            Ok(()) => out.push_str(&format!("[+]{} ok\n", c.name)),
            Err(e) => {
                failed = true;
                out.push_str(&format!("[-]{} failed: {e}\n", c.name));
            }
        }
    }
    if !excluded.is_empty() {
        out.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            excluded.iter().map(|e| format!("\"{e}\"")).collect::<Vec<_>>().join(",")
        ));
    }
    if failed {
        return text(StatusCode::INTERNAL_SERVER_ERROR, format!("{out}{endpoint} check failed\n"));
    }
    if !verbose {
        return text(StatusCode::OK, "ok".into());
    }
    text(StatusCode::OK, format!("{out}{endpoint} check passed\n"))
}

fn text(code: StatusCode, body: String) -> Response {
    (code, [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::X_CONTENT_TYPE_OPTIONS, "nosniff")], body)
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(r: Response) -> (u16, String) {
        let code = r.status().as_u16();
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20).await.expect("body");
        (code, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn healthy_answers_ok_and_lists_checks_when_verbose() {
        let c = checks(None);
        assert_eq!(body(respond("readyz", None, &c)).await, (200, "ok".into()));
        assert_eq!(
            body(respond("livez", Some("verbose"), &c)).await,
            (200, "[+]ping ok\n[+]storage ok\nlivez check passed\n".into())
        );
        assert_eq!(body(respond("readyz/storage", None, &c)).await, (200, "ok".into()));
        assert_eq!(body(respond("readyz/nope", None, &c)).await.0, 404);
    }

    #[tokio::test]
    async fn a_failed_store_fails_every_endpoint_naming_the_cause() {
        let c = checks(Some("disk full"));
        for endpoint in ["healthz", "livez", "readyz"] {
            let (code, text) = body(respond(endpoint, None, &c)).await;
            assert_eq!(code, 500, "{endpoint}");
            assert!(text.starts_with("[+]ping ok\n[-]storage failed: the store is read-only"), "{text}");
            assert!(text.contains("disk full"), "{text}");
            assert!(text.ends_with(&format!("{endpoint} check failed\n")), "{text}");
        }
        let (code, text) = body(respond("readyz/storage", None, &c)).await;
        assert_eq!(code, 500);
        assert!(text.contains("disk full"), "{text}");
        let (code, text) = body(respond("readyz", Some("exclude=storage&verbose"), &c)).await;
        assert_eq!((code, text.as_str()), (200, "[+]ping ok\n[+]storage excluded: ok\nreadyz check passed\n"));
    }
}
