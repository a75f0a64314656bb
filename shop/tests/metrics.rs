//! A Prometheus scrape of the shop after known calls: its handlers' calls and the page's calls
//! through the proxy route, counted by endpoint and status. In a test binary of its own: the
//! recorder is the process's.

use axum::body::Body;
use courier::mock::{Answer, Mock};
use courier::Caller;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use metrics_exporter_prometheus::PrometheusBuilder;
use shop::{api, app, metrics, Order};
use tower::ServiceExt;

#[tokio::test]
async fn a_scrape_counts_each_endpoints_calls_by_status() {
    let handle = PrometheusBuilder::new().install_recorder().unwrap();
    let mock = Mock::new(api("http://orders.internal").unwrap()).unwrap();
    let order = Order {
        id: 1,
        item: "book".into(),
        cents: 1200,
    };
    mock.on(|api| api.orders().services().list())
        .returns(&vec![order.clone()]);
    mock.on(|api| api.orders().services().get())
        .with(&shop::OrderId(1))
        .returns(&order);
    mock.on(|api| api.orders().services().get())
        .with(&shop::OrderId(2))
        .answer(Answer::status(404));
    let caller = Caller::builder(api("http://orders.internal").unwrap())
        .mock(&mock)
        .metrics(true)
        .build()
        .unwrap();
    let app = app(caller).unwrap().merge(metrics(handle));

    let send = |uri: &'static str| {
        let app = app.clone();
        async move {
            let response = app
                .oneshot(Request::get(uri).body(Body::empty()).unwrap())
                .await
                .unwrap();
            let status = response.status();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8(body.to_vec()).unwrap())
        }
    };
    for _ in 0..2 {
        assert_eq!(send("/summary").await.0, StatusCode::OK);
    }
    assert_eq!(
        send("/api/request?_s=shop&_g=orders&_m=get&_v=1").await.0,
        StatusCode::OK
    );
    let missing = send("/api/request?_s=shop&_g=orders&_m=get&_v=2").await.0;
    assert_eq!(missing, StatusCode::NOT_FOUND);
    let refused = send("/api/request?_s=shop&_g=orders&_m=nothing").await.0;
    assert_eq!(refused, StatusCode::NOT_FOUND);

    let (status, scraped) = send("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    let count = |labels: &[&str]| -> u64 {
        scraped
            .lines()
            .filter(|line| line.starts_with("http_client_request_duration_count{"))
            .filter(|line| labels.iter().all(|label| line.contains(label)))
            .map(|line| line.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    let list = r#"courier_endpoint="orders.list""#;
    let get = r#"courier_endpoint="orders.get""#;
    assert_eq!(
        count(&[list, r#"http_response_status_code="200""#]),
        2,
        "{scraped}"
    );
    assert_eq!(
        count(&[get, r#"http_response_status_code="200""#]),
        1,
        "{scraped}"
    );
    assert_eq!(
        count(&[
            get,
            r#"http_response_status_code="404""#,
            r#"error_type="404""#
        ]),
        1,
        "{scraped}"
    );
    let refusals = scraped
        .lines()
        .find(|line| {
            line.starts_with("courier_proxy_refusals{") && line.contains("ENDPOINT_NOT_IN_ROUTES")
        })
        .unwrap_or_else(|| panic!("a refusal counted: {scraped}"));
    assert!(refusals.ends_with(" 1"), "{refusals}");
}
