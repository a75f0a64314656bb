//! The browser package served by the proxy (`Proxy::browser_package`), over a real socket on
//! 127.0.0.1: its modules with their type, etag and caching, `HEAD`, `If-None-Match`, and
//! nothing else under its path.

use courier_server::Proxy;
use std::collections::HashMap;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A response as it came over the wire.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map_or_else(|| panic!("no `{name}` in {self:?}"), String::as_str)
    }
}

/// Serves `proxy` with [`Proxy::serve`] on 127.0.0.1; its address.
async fn serve(proxy: Proxy) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(proxy.serve(listener));
    addr
}

/// Sends `method target` with `extra` header lines on a connection of its own.
async fn send(addr: std::net::SocketAddr, method: &str, target: &str, extra: &str) -> Answer {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request =
        format!("{method} {target} HTTP/1.1\r\nhost: app\r\nconnection: close\r\n{extra}\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut bytes))
        .await
        .expect("the answer within 10 s")
        .unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

#[tokio::test]
async fn the_module_and_what_it_imports_are_served_as_javascript_with_an_etag() {
    let addr = serve(Proxy::new().browser_package("/courier")).await;

    let index = send(addr, "GET", "/courier/index.js", "").await;
    assert_eq!(index.status, 200, "{index:?}");
    assert_eq!(
        index.header("content-type"),
        "text/javascript; charset=utf-8"
    );
    assert_eq!(index.header("cache-control"), "no-cache");
    assert_eq!(index.header("x-content-type-options"), "nosniff");
    assert_eq!(index.header("content-length"), index.body.len().to_string());
    let etag = index.header("etag").to_owned();
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
        "{etag}"
    );
    assert!(index.body.contains("createProxyCaller"), "{}", index.body);

    // What it imports, by the name it imports it by, from the same folder.
    let imported = index
        .body
        .split("from \"./")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("index.js imports a module of its own");
    let module = send(addr, "GET", &format!("/courier/{imported}"), "").await;
    assert_eq!(module.status, 200, "{imported}: {module:?}");
    assert_eq!(
        module.header("content-type"),
        "text/javascript; charset=utf-8"
    );
    assert_ne!(module.header("etag"), etag);
    assert!(module.body.starts_with("/**") || module.body.contains("export"));

    // Its source map, beside it.
    let map = send(addr, "GET", "/courier/index.js.map", "").await;
    assert_eq!(map.status, 200);
    assert_eq!(map.header("content-type"), "application/json");
    let map: serde_json::Value = serde_json::from_str(&map.body).unwrap();
    assert_eq!(map["file"], "index.js");

    // HEAD: the same head, no body.
    let head = send(addr, "HEAD", "/courier/index.js", "").await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("etag"), etag);
    assert_eq!(head.header("content-length"), index.body.len().to_string());
    assert_eq!(head.body, "");
}

#[tokio::test]
async fn if_none_match_with_the_etag_is_answered_304() {
    let addr = serve(Proxy::new().browser_package("/courier/")).await;
    let etag = send(addr, "GET", "/courier/caller.js", "")
        .await
        .header("etag")
        .to_owned();

    let again = send(
        addr,
        "GET",
        "/courier/caller.js",
        &format!("if-none-match: {etag}\r\n"),
    )
    .await;
    assert_eq!(again.status, 304, "{again:?}");
    assert_eq!(again.header("etag"), etag);
    assert_eq!(again.header("cache-control"), "no-cache");
    assert_eq!(again.body, "");

    // Another file's etag does not match this one.
    let other = send(addr, "GET", "/courier/index.js", "")
        .await
        .header("etag")
        .to_owned();
    let changed = send(
        addr,
        "GET",
        "/courier/caller.js",
        &format!("if-none-match: {other}\r\n"),
    )
    .await;
    assert_eq!(changed.status, 200);
}

#[tokio::test]
async fn nothing_else_under_the_path_is_served_and_the_rest_of_the_proxy_is_as_it_was() {
    // A static folder holding a file under the package's path: the package's path is its own.
    let site = tempfile::tempdir().unwrap();
    std::fs::create_dir(site.path().join("courier")).unwrap();
    std::fs::write(site.path().join("courier/app.js"), "export {};").unwrap();
    std::fs::write(site.path().join("page.js"), "export {};").unwrap();
    let proxy = Proxy::new()
        .browser_package("/courier")
        .static_dir(site.path());
    let addr = serve(proxy).await;

    for target in [
        "/courier/nope.js",
        "/courier/app.js",
        "/courier/index.d.ts",
        "/courier/../courier/index.js",
        "/courier/%69ndex.js",
        "/courier",
        "/courier/",
    ] {
        let answer = send(addr, "GET", target, "").await;
        assert_eq!(answer.status, 404, "{target}: {answer:?}");
    }
    let refused = send(addr, "POST", "/courier/index.js", "content-length: 0\r\n").await;
    assert_eq!(refused.status, 405);
    assert_eq!(refused.header("allow"), "GET,HEAD");

    let page = send(addr, "GET", "/page.js", "").await;
    assert_eq!(page.status, 200);
    let call = send(addr, "GET", "/api/request?_s=none&_g=a&_m=b", "").await;
    assert_eq!(call.status, 404);
    assert!(call.body.contains("ENDPOINT_NOT_IN_ROUTES"), "{call:?}");
}

#[test]
fn a_path_that_cannot_be_mounted_fails_into_router() {
    for path in ["courier", "/", "//", "/a?b", "/{file}"] {
        let err = Proxy::new()
            .browser_package(path)
            .into_router()
            .unwrap_err();
        assert!(err.to_string().contains("browser package"), "{path}: {err}");
    }
    let err = Proxy::new()
        .browser_package("/api/sse")
        .into_router()
        .unwrap_err();
    assert!(err.to_string().contains("one of the proxy's own"), "{err}");
}
