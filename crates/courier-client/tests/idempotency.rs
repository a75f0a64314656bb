//! Writes with an idempotency key (`idempotency_key`), against a raw HTTP/1.1 upstream on
//! 127.0.0.1 that applies each write and, the first time, drops the connection before it
//! answers: the client sends the write again with the same key, and the upstream, deduplicating
//! by it, applies it once. A write without the setting is sent once.

use courier_client::Client;
use courier_core::{ApiDef, GroupDef, HttpEndpoint};
use courier_test_support::writes::dropping_upstream as upstream;
use serde_json::json;
use std::net::SocketAddr;

fn client(addr: SocketAddr, keyed: bool) -> Client {
    let create = HttpEndpoint::post("/orders");
    let create = if keyed {
        create.idempotency_key(true)
    } else {
        create
    };
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .group("orders", GroupDef::new().endpoint("create", create))
        .build()
        .unwrap();
    Client::new(api).unwrap()
}

#[tokio::test]
async fn a_write_whose_answer_was_lost_is_sent_again_with_the_same_key_and_applied_once() {
    let (addr, seen) = upstream().await;
    let answer = client(addr, true)
        .call("orders.create", json!({ "item": "book" }))
        .await
        .expect("the retried write answers");
    assert_eq!(answer.data, json!({ "applied": 1 }));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "sent twice: {seen:?}");
    let key = seen[0].clone().expect("a key on the first attempt");
    assert_eq!(key.len(), 32, "{key}");
    assert_eq!(seen[1].as_deref(), Some(key.as_str()), "the same key again");
}

#[tokio::test]
async fn each_call_has_its_own_key_and_a_write_without_the_setting_is_sent_once() {
    let (addr, seen) = upstream().await;
    let keyed = client(addr, true);
    keyed.call("orders.create", json!({})).await.unwrap();
    keyed.call("orders.create", json!({})).await.unwrap();
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_ne!(seen[1], seen[2], "a key per call");
    }

    let (addr, seen) = upstream().await;
    let error = client(addr, false)
        .call("orders.create", json!({}))
        .await
        .expect_err("a write whose answer is lost is not sent again");
    assert!(error.is_network(), "{error}");
    assert_eq!(*seen.lock().unwrap(), [None]);
}
