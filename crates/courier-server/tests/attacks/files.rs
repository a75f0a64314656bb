//! The static front end (`Proxy::static_dir`): no address reaches a file outside its folder,
//! and the proxy's own paths are never shadowed by a file.

use crate::harness::{exchange, request, site_with_files, still_serves};

#[tokio::test]
async fn no_address_reaches_a_file_outside_the_folder() {
    let root = tempfile::tempdir().unwrap();
    let site_dir = root.path().join("site");
    std::fs::create_dir_all(site_dir.join("api")).unwrap();
    std::fs::write(site_dir.join("index.html"), "<h1>the app</h1>").unwrap();
    std::fs::write(root.path().join("secret.txt"), "TOP-SECRET").unwrap();
    // A file where the proxy's route is: the route wins.
    std::fs::write(site_dir.join("api").join("request"), "SHADOW").unwrap();
    let site = site_with_files(&site_dir).await;

    let index = exchange(site.proxy, &request(&site, "GET", "/", &[], ""))
        .await
        .answer();
    assert_eq!(index.status, 200);
    assert_eq!(index.body, b"<h1>the app</h1>");
    assert_eq!(index.header("x-content-type-options"), Some("nosniff"));

    for target in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e%2fsecret.txt",
        "/..%5csecret.txt",
        "/site/../../secret.txt",
        "/./../secret.txt",
        "//secret.txt",
        "/index.html%00/../../secret.txt",
    ] {
        let exchanged = exchange(site.proxy, &request(&site, "GET", target, &[], "")).await;
        for answer in exchanged.responses() {
            assert_ne!(answer.status, 200, "{target}: {answer:?}");
            assert!(
                !String::from_utf8_lossy(&answer.body).contains("TOP-SECRET"),
                "{target} leaked the file"
            );
        }
    }

    let call = request(
        &site,
        "GET",
        "/api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A1%7D",
        &[],
        "",
    );
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(!String::from_utf8_lossy(&answer.body).contains("SHADOW"));
    still_serves(&site).await;
}
