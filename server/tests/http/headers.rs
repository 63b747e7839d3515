//! Response headers and paths: nothing personal is cached, TLS is insisted
//! on when the public URL is https, and a path with dot segments cannot
//! slip past the page guard.

use crate::support::TestApp;

fn cache_control(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get("cache-control")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

#[tokio::test]
async fn what_a_signed_in_manager_sees_is_never_kept_by_a_browser_or_proxy_cache() {
    for (user, paths) in [
        (
            "manager",
            &[
                "/audit",
                "/api/v1/me",
                "/api/v1/proposals",
                "/api/v1/audit/events.csv",
            ][..],
        ),
        ("approver", &["/queue", "/fn/review_queue"][..]),
    ] {
        let app = TestApp::spawn().await;
        app.login_ok(user).await;
        for path in paths {
            let response = app.get(path).await;
            assert!(
                response.status().is_success(),
                "{path}: {}",
                response.status()
            );
            assert_eq!(
                cache_control(&response).as_deref(),
                Some("no-store"),
                "{path}"
            );
        }
    }
}

#[tokio::test]
async fn with_an_https_public_url_every_answer_tells_the_browser_to_insist_on_tls() {
    let app = TestApp::spawn_with(|settings| {
        settings.public_url = Some("https://countersign.example".into());
    })
    .await;
    for path in ["/login", "/api/v1/me", "/healthz"] {
        let response = app.get(path).await;
        let hsts = response
            .headers()
            .get("strict-transport-security")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        assert!(hsts.starts_with("max-age=31536000"), "{path}: {hsts:?}");
    }

    let plain = TestApp::spawn().await;
    let response = plain.get("/login").await;
    assert!(
        response
            .headers()
            .get("strict-transport-security")
            .is_none(),
        "no HSTS over plain HTTP"
    );
}

/// Sends `method path` exactly as written (HTTP clients resolve dot
/// segments before sending; an attacker's need not) with the session
/// cookie; returns the status code and the Location header.
async fn raw(app: &TestApp, method: &str, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = app.address.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let cookie = app.session_cookie().unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nCookie: countersign_session={cookie}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let location = answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("location")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    (status, location)
}

#[tokio::test]
async fn a_path_with_dot_segments_is_normalised_before_the_page_guard_decides() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;
    for sneaky in ["/./admin", "/queue/../admin", "//admin", "/admin/."] {
        assert_eq!(
            raw(&app, "GET", sneaky).await,
            (308, "/admin".to_owned()),
            "{sneaky}"
        );
    }
    // The plain path is then refused to a customer, as always.
    assert_eq!(raw(&app, "GET", "/admin").await.0, 403);
    // A path that climbs above the root, or a write to a dotted path, is refused.
    assert_eq!(raw(&app, "GET", "/../admin").await.0, 400);
    assert_eq!(raw(&app, "POST", "/./fn/reject_proposal").await.0, 400);
}

/// The `nonce-…` source of a page's script policy.
fn script_nonce(policy: &str) -> String {
    let script_src = policy
        .split(';')
        .map(str::trim)
        .find(|directive| directive.starts_with("script-src "))
        .unwrap_or_else(|| panic!("no script-src in {policy}"));
    assert!(
        !script_src.contains("'unsafe-inline'") && !script_src.contains("'unsafe-eval'"),
        "{script_src}"
    );
    script_src
        .split_whitespace()
        .find_map(|source| source.strip_prefix("'nonce-")?.strip_suffix('\''))
        .unwrap_or_else(|| panic!("no nonce in {script_src}"))
        .to_owned()
}

#[tokio::test]
async fn a_page_runs_only_the_scripts_that_carry_its_own_fresh_nonce() {
    let app = TestApp::spawn().await;
    let mut nonces = Vec::new();
    // A page, the same page again, and the page for a path that is none.
    for path in ["/login", "/login", "/no-such-page"] {
        let response = app.get(path).await;
        let policy = response
            .headers()
            .get("content-security-policy")
            .and_then(|v| v.to_str().ok())
            .unwrap()
            .to_owned();
        let html = response.text().await.unwrap();
        for directive in [
            "default-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'self'",
        ] {
            assert!(
                policy.contains(directive),
                "{path}: {directive} in {policy}"
            );
        }
        assert!(!policy.contains("'unsafe-inline'"), "{policy}");
        let nonce = script_nonce(&policy);
        // Every script the page carries, the hydration loader among them,
        // has this response's nonce.
        let scripts: Vec<&str> = html.split("<script").skip(1).collect();
        assert!(!scripts.is_empty(), "{html}");
        for script in scripts {
            let tag = script.split('>').next().unwrap();
            assert!(
                tag.contains(&format!("nonce=\"{nonce}\"")),
                "{path}: a script without the nonce {nonce}: <script{tag}>"
            );
        }
        nonces.push(nonce);
    }
    assert_ne!(nonces[0], nonces[1], "a nonce is never reused");
    assert_ne!(nonces[1], nonces[2], "a nonce is never reused");
}

/// A site root holding one built bundle, as `scripts/build-site.sh` leaves it.
fn site_with_bundle(version: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let bundle = root.path().join("pkg").join(version);
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(root.path().join("pkg/current"), format!("{version}\n")).unwrap();
    std::fs::write(bundle.join("countersign.js"), "export default 1;").unwrap();
    std::fs::write(bundle.join("countersign.js.gz"), b"\x1f\x8bpretend gzip").unwrap();
    root
}

#[tokio::test]
async fn after_a_deploy_browsers_load_the_new_bundle_while_keeping_each_bundle_for_a_year() {
    let version = "0123456789abcdef";
    let site = site_with_bundle(version);
    let root = site.path().to_str().unwrap().to_owned();
    let app = TestApp::spawn_with(|settings| settings.site_root = root).await;

    let (_, page) = app.get_page("/login").await;
    assert!(
        page.contains(&format!("/pkg/{version}/countersign.js")),
        "the page loads the bundle from its versioned path"
    );
    assert!(page.contains(&format!("href=\"/pkg/{version}/countersign.css\"")));

    let url = app.url(&format!("/pkg/{version}/countersign.js"));
    let zipped = app
        .bare_client()
        .get(&url)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(zipped.status(), 200);
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    assert_eq!(
        cache_control(&zipped).as_deref(),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(&zipped.bytes().await.unwrap()[..], b"\x1f\x8bpretend gzip");

    let plain = app.bare_client().get(&url).send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    assert_eq!(plain.text().await.unwrap(), "export default 1;");

    let missing = app.get(&format!("/pkg/{version}/not-built-yet.js")).await;
    assert_eq!(missing.status(), 404);
    assert_eq!(
        cache_control(&missing).as_deref(),
        Some("no-store"),
        "a file missing today may exist after the next deploy"
    );
}

#[tokio::test]
async fn pages_and_api_answers_travel_compressed_but_live_streams_are_never_held_back() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    for path in ["/queue", "/api/openapi.json"] {
        let response = app
            .client
            .get(app.url(path))
            .header("accept-encoding", "gzip, br")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let encoding = response.headers()["content-encoding"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(encoding == "br" || encoding == "gzip", "{path}: {encoding}");
    }

    let stream = app
        .client
        .get(app.url("/api/live/proposals"))
        .header("accept-encoding", "gzip, br")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    assert!(
        stream.headers().get("content-encoding").is_none(),
        "a compressor would hold events back until its buffer fills"
    );
}
