use super::*;
use courier_core::{BoxError, Kind};
use courier_test_support::metrics::{label, Capture, Recorded};
use tower::{service_fn, ServiceExt};

/// Runs `calls` against a service answering each request's path as its status (`/404` is
/// 404), failing `/fail`, under a recorder; what it recorded.
fn recorded(calls: &[(&str, Option<EndpointMeta>)]) -> Vec<Recorded> {
    let capture = Capture::default();
    capture.run(async {
        let service = MetricsLayer::new().layer(service_fn(|request: Request<()>| async move {
            let path = request.uri().path().trim_start_matches('/').to_owned();
            if path == "fail" {
                return Err::<Response<()>, BoxError>("refused".into());
            }
            let status = path.parse::<u16>().unwrap_or(200);
            Ok(Response::builder().status(status).body(()).unwrap())
        }));
        for (path, meta) in calls {
            let mut request = Request::post(format!("http://api.example{path}"))
                .body(())
                .unwrap();
            if let Some(meta) = meta {
                request.extensions_mut().insert(meta.clone());
            }
            let _ = service.clone().oneshot(request).await;
        }
    });
    capture.recorded()
}

#[test]
fn each_call_is_one_duration_with_its_endpoint_method_status_and_error() {
    let meta = EndpointMeta::new("orders.create", Kind::Mutation);
    let seen = recorded(&[
        ("/201", Some(meta.clone())),
        ("/404", Some(meta)),
        ("/fail", None),
    ]);
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.iter().all(|r| r.name == CLIENT_REQUEST_DURATION));
    assert!(seen.iter().all(|r| (0.0..5.0).contains(&r.value)));
    let ok = &seen[0].labels;
    assert_eq!(label(ok, "http.request.method"), Some("POST"));
    assert_eq!(label(ok, "server.address"), Some("api.example"));
    assert_eq!(label(ok, "courier.endpoint"), Some("orders.create"));
    assert_eq!(label(ok, "http.response.status_code"), Some("201"));
    assert_eq!(label(ok, "error.type"), None);
    let missing = &seen[1].labels;
    assert_eq!(label(missing, "http.response.status_code"), Some("404"));
    assert_eq!(label(missing, "error.type"), Some("404"));
    let failed = &seen[2].labels;
    assert_eq!(label(failed, "error.type"), Some("_OTHER"));
    assert_eq!(label(failed, "http.response.status_code"), None);
    assert_eq!(label(failed, "courier.endpoint"), None);
}

#[test]
fn a_method_outside_the_rfcs_is_other_and_timeouts_and_sheds_are_named() {
    assert_eq!(method(&Method::from_bytes(b"PURGE").unwrap()), "_OTHER");
    assert_eq!(method(&Method::PATCH), "PATCH");
    #[cfg(feature = "timeout")]
    {
        let elapsed: BoxError = Box::new(crate::timeout::error::Elapsed::new(
            std::time::Duration::from_secs(1),
        ));
        assert_eq!(error_type(&elapsed), "timeout");
    }
    assert_eq!(error_type(&BoxError::from("anything")), "_OTHER");
}
