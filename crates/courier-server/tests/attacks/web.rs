//! Another site in the victim's browser: cross-site request forgery on writes, cross-site reads
//! under the Fetch Metadata policy, and cross-site WebSocket hijacking — on all three transports
//! (HTTP calls, streams, channels). The browser sends the victim's cookies with each; the
//! proxy must tell the page's own requests from another site's by `Origin`, `Sec-Fetch-Site`
//! and the signed CSRF token, before anything reaches the upstream or the hub.

use crate::harness::{
    exchange, good_write_headers, key, pairs, request, site, site_with, sockets, still_serves, Site,
};
use std::sync::atomic::Ordering;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Error as WsError;

const WRITE: &str = "/api/request?_s=demo&_g=users&_m=create";
const BODY: &str = r#"{"variables":{"name":"forged"}}"#;

/// A write with `headers`, answered.
async fn write(site: &Site, headers: &[(&str, &str)]) -> crate::harness::Answer {
    let call = request(site, "POST", WRITE, headers, BODY);
    exchange(site.proxy, &call).await.answer()
}

/// Headers as pairs of owned strings.
type Headers = Vec<(String, String)>;

/// The good write's headers with each `(name, value)` of `changes` set (or removed, for `None`).
fn with(site: &Site, changes: &[(&str, Option<&str>)]) -> Headers {
    let mut headers = good_write_headers(site);
    for (name, value) in changes {
        headers.retain(|(n, _)| n != name);
        if let Some(value) = value {
            headers.push(((*name).to_owned(), (*value).to_owned()));
        }
    }
    headers
}

#[tokio::test]
async fn the_pages_own_write_passes() {
    let site = site().await;
    let answer = write(&site, &pairs(&good_write_headers(&site))).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(site.upstream.ever_saw("forged"));
    assert_eq!(
        site.upstream.last().headers["cookie"]
            .to_str()
            .unwrap()
            .split("; ")
            .next(),
        Some("sid=victim")
    );
}

/// The app's sign-in route: the session of the user named in the path, issued with the proxy's
/// own session options.
fn with_sign_in(router: axum::Router) -> axum::Router {
    use courier_layers::session::{IssueRefused, IssuedSession, SessionCookies};
    async fn sign_in(
        axum::extract::Path(user): axum::extract::Path<String>,
    ) -> Result<(IssuedSession, &'static str), IssueRefused> {
        let options = courier_core::SessionOptions::new()
            .cookies(["sid"])
            .csrf_signed("csrf", "x-csrf", key());
        Ok((
            SessionCookies::new(&options).cookie("sid", user).issue()?,
            "signed in",
        ))
    }
    router.route("/login/{user}", axum::routing::post(sign_in))
}

/// Signs `user` in and returns the `cookie` header a browser then sends, and the CSRF token.
async fn signed_in(site: &Site, user: &str) -> (String, String) {
    let call = request(site, "POST", &format!("/login/{user}"), &[], "");
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(answer.status, 200, "{answer:?}");
    let pairs: Vec<String> = answer
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("set-cookie"))
        .map(|(_, line)| {
            assert!(line.contains("; Secure; SameSite=Lax"), "{line}");
            line.split(';').next().unwrap().to_owned()
        })
        .collect();
    let token = pairs[1].strip_prefix("csrf=").unwrap().to_owned();
    (pairs.join("; "), token)
}

#[tokio::test]
async fn a_session_issued_by_the_apps_sign_in_passes_the_signed_check() {
    let site = site_with(with_sign_in).await;
    let (cookie, token) = signed_in(&site, "victim").await;
    assert!(cookie.starts_with("sid=victim; csrf="), "{cookie}");
    let origin = format!("http://{}", site.proxy);
    let page = |cookie: &str, token: &str| {
        vec![
            ("origin".to_owned(), origin.clone()),
            ("cookie".to_owned(), cookie.to_owned()),
            ("x-csrf".to_owned(), token.to_owned()),
            ("content-type".to_owned(), "application/json".to_owned()),
        ]
    };
    let answer = write(&site, &pairs(&page(&cookie, &token))).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(site.upstream.ever_saw("forged"));

    // An attacker's own sign-in gives a token for the attacker's session: planted beside the
    // victim's session cookie (a sibling subdomain can write cookies), it is refused.
    let (_, theirs) = signed_in(&site, "attacker").await;
    let planted = format!("sid=victim; csrf={theirs}");
    let answer = write(&site, &pairs(&page(&planted, &theirs))).await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(
        String::from_utf8_lossy(&answer.body).contains("CSRF_CHECK_FAILED"),
        "{answer:?}"
    );
}

#[tokio::test]
async fn a_forged_write_is_refused_before_the_upstream() {
    let site = site().await;
    let other_token = courier_layers::session::csrf::issue(&key(), "sid=attacker").unwrap();
    let theirs = format!("sid=victim; csrf={other_token}");
    let look_alike = format!("http://{}.evil.example", site.proxy.ip());
    let cases: Vec<(&str, Headers, &str)> = vec![
        (
            "no CSRF header",
            with(&site, &[("x-csrf", None)]),
            "CSRF_CHECK_FAILED",
        ),
        (
            "a CSRF header that is not the cookie",
            with(&site, &[("x-csrf", Some("guessed"))]),
            "CSRF_CHECK_FAILED",
        ),
        (
            // Someone who can write the victim's cookies plants a token they know.
            "a planted, unsigned token",
            with(
                &site,
                &[
                    ("cookie", Some("sid=victim; csrf=planted")),
                    ("x-csrf", Some("planted")),
                ],
            ),
            "CSRF_CHECK_FAILED",
        ),
        (
            "another session's token",
            with(
                &site,
                &[("cookie", Some(&theirs)), ("x-csrf", Some(&other_token))],
            ),
            "CSRF_CHECK_FAILED",
        ),
        (
            "another site's Origin",
            with(&site, &[("origin", Some("https://evil.example"))]),
            "ORIGIN_NOT_TRUSTED",
        ),
        (
            "Origin: null",
            with(&site, &[("origin", Some("null"))]),
            "ORIGIN_NOT_TRUSTED",
        ),
        (
            "a look-alike origin",
            with(&site, &[("origin", Some(&look_alike))]),
            "ORIGIN_NOT_TRUSTED",
        ),
        (
            "no Origin, cross-site fetch metadata",
            with(
                &site,
                &[("origin", None), ("sec-fetch-site", Some("cross-site"))],
            ),
            "ORIGIN_NOT_TRUSTED",
        ),
    ];
    for (what, headers, code) in cases {
        let answer = write(&site, &pairs(&headers)).await;
        assert_eq!(answer.status, 403, "{what}: {answer:?}");
        assert_eq!(answer.code(), code, "{what}");
    }
    assert_eq!(
        site.upstream.count(),
        0,
        "no forged write reached the upstream"
    );
    still_serves(&site).await;
}

#[tokio::test]
async fn a_trusted_origin_may_write_and_a_sibling_may_not() {
    let site = site().await;
    let trusted = with(&site, &[("origin", Some("https://admin.example.com"))]);
    assert_eq!(write(&site, &pairs(&trusted)).await.status, 200);
    let sibling = with(
        &site,
        &[
            ("origin", Some("https://blog.example.com")),
            ("sec-fetch-site", Some("same-site")),
        ],
    );
    let answer = write(&site, &pairs(&sibling)).await;
    assert_eq!(answer.status, 403);
    assert_eq!(site.upstream.count(), 1);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_cross_site_read_is_refused_under_the_fetch_metadata_policy() {
    let site = site().await;
    let read = request(
        &site,
        "GET",
        "/api/request?_s=demo&_g=users&_m=get&_v=7",
        &[
            ("cookie", "sid=victim"),
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-mode", "no-cors"),
            ("sec-fetch-dest", "script"),
        ],
        "",
    );
    let answer = exchange(site.proxy, &read).await.answer();
    assert_eq!(answer.status, 403, "{answer:?}");
    assert_eq!(answer.code(), "ORIGIN_NOT_TRUSTED");
    // The same read from the page itself.
    let own = request(
        &site,
        "GET",
        "/api/request?_s=demo&_g=users&_m=get&_v=7",
        &[("cookie", "sid=victim"), ("sec-fetch-site", "same-origin")],
        "",
    );
    assert_eq!(exchange(site.proxy, &own).await.answer().status, 200);
    assert_eq!(site.upstream.count(), 1);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_cross_site_stream_is_refused_before_the_upstream() {
    let site = site().await;
    let open = |site_header: &'static str| {
        request(
            &site,
            "GET",
            "/api/sse?_s=demo&_g=users&_m=events",
            &[
                ("cookie", "sid=victim"),
                ("origin", "https://evil.example"),
                ("sec-fetch-site", site_header),
                ("accept", "text/event-stream"),
            ],
            "",
        )
    };
    let answer = exchange(site.proxy, &open("cross-site")).await.answer();
    assert_eq!(answer.status, 403, "{answer:?}");
    assert_eq!(answer.code(), "ORIGIN_NOT_TRUSTED");
    assert_eq!(site.upstream.count(), 0);
    let own = request(
        &site,
        "GET",
        "/api/sse?_s=demo&_g=users&_m=events",
        &[("cookie", "sid=victim"), ("sec-fetch-site", "same-origin")],
        "",
    );
    let answer = exchange(site.proxy, &own).await.answer();
    assert_eq!(answer.status, 200);
    assert!(String::from_utf8_lossy(&answer.body).contains("data: {\"n\":1}"));
    still_serves(&site).await;
}

/// Opens the channel `member` of group `users` with `origin` (if any) as a browser would.
async fn open_socket(site: &Site, member: &str, origin: Option<&str>) -> Result<u16, WsError> {
    let url = format!(
        "ws://{}/api/ws?_s=demo&_g=users&_m={member}&_v=%7B%22id%22%3A%22r1%22%7D",
        site.proxy
    );
    let mut handshake = url.into_client_request().unwrap();
    handshake
        .headers_mut()
        .insert("cookie", "sid=victim".parse().unwrap());
    if let Some(origin) = origin {
        handshake
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
    }
    let (socket, response) = tokio_tungstenite::connect_async(handshake).await?;
    drop(socket);
    Ok(response.status().as_u16())
}

fn refused_status(result: Result<u16, WsError>) -> u16 {
    match result {
        Err(WsError::Http(response)) => response.status().as_u16(),
        other => panic!("the handshake was not refused: {other:?}"),
    }
}

#[tokio::test]
async fn cross_site_websocket_hijacking_of_a_remote_channel_is_refused() {
    let site = site().await;
    for origin in ["https://evil.example", "null", "http://localhost:1"] {
        assert_eq!(
            refused_status(open_socket(&site, "room", Some(origin)).await),
            403,
            "{origin}"
        );
    }
    assert_eq!(sockets(&site.upstream), 0, "no upstream socket was opened");
    // The page's own origin and a trusted one are admitted.
    let own = format!("http://{}", site.proxy);
    assert_eq!(open_socket(&site, "room", Some(&own)).await.unwrap(), 101);
    assert_eq!(
        open_socket(&site, "room", Some("https://admin.example.com"))
            .await
            .unwrap(),
        101
    );
    for _ in 0..50 {
        if sockets(&site.upstream) == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        sockets(&site.upstream),
        2,
        "the admitted sockets reached the upstream"
    );
    still_serves(&site).await;
}

#[tokio::test]
async fn cross_site_websocket_hijacking_of_an_implemented_channel_is_refused() {
    let site = site().await;
    assert_eq!(
        refused_status(open_socket(&site, "lobby", Some("https://evil.example")).await),
        403
    );
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(
        site.joins.load(Ordering::SeqCst),
        0,
        "nobody joined the hub"
    );
    let own = format!("http://{}", site.proxy);
    assert_eq!(open_socket(&site, "lobby", Some(&own)).await.unwrap(), 101);
    for _ in 0..50 {
        if site.joins.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(site.joins.load(Ordering::SeqCst), 1);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_refused_handshake_says_why_in_json() {
    let site = site().await;
    let handshake = request(
        &site,
        "GET",
        "/api/ws?_s=demo&_g=users&_m=room&_v=%7B%22id%22%3A%22r1%22%7D",
        &[
            ("upgrade", "websocket"),
            ("sec-websocket-version", "13"),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("origin", "https://evil.example"),
            ("cookie", "sid=victim"),
        ],
        "",
    );
    let answer = exchange(site.proxy, &handshake).await.answer();
    assert_eq!(answer.status, 403);
    assert_eq!(answer.code(), "ORIGIN_NOT_TRUSTED");
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("socket handshake refused by the session"),
        "{answer:?}"
    );
    assert_eq!(site.upstream.count(), 0);
}
