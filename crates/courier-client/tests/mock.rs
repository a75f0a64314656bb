//! `courier::mock`: a typed API's upstream mocked, behind a direct `Caller` and a
//! `ProxyCaller`. The calls go down the client's real layers — coalescing, retry, timeouts,
//! cancel-previous, idempotency keys — and the mock answers what reaches the bottom; streams
//! and channels are opened as the real clients open them (a channel over a WebSocket
//! connection in memory).

use courier::mock::{Answer, Mock};
use courier::typed::{channel, endpoint, stream, Channel, Group, Http, Mutation, Stream};
use courier::{Api, ApiDef, ProxyCaller};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
}

#[derive(Clone, Debug, Serialize)]
struct UserId(u64);

#[derive(Clone, Debug, Serialize)]
struct NewUser {
    name: String,
}

#[derive(Clone, Debug, Serialize)]
struct Search {
    q: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Chat {
    text: String,
}

#[derive(Clone, Debug, Serialize)]
struct Room {
    room: String,
}

#[derive(courier::Group)]
struct Users {
    get: Http<User, UserId>,
    search: Http<Vec<User>, Search>,
    slow: Http<User, UserId>,
    create: Http<User, NewUser, Mutation>,
    changes: Stream<User>,
    room: Channel<Chat, Room, Chat>,
}

#[derive(courier::Api)]
struct Example {
    users: Group<Users>,
}

fn api() -> Api<Example> {
    let users = Group::new(Users {
        get: endpoint().get("/:id").expose(true),
        search: endpoint().get("/search").expose(true),
        slow: endpoint()
            .get("/slow/:id")
            .timeout(Duration::from_millis(100))
            .expose(true),
        create: endpoint().post("").idempotency_key(true).expose(true),
        changes: stream().get("/changes").expose(true),
        room: channel().connect("/rooms/:room").send().expose(true),
    })
    .prefix("/users");
    ApiDef::builder()
        .base_url("http://users.internal")
        .cancel_previous(["users.search"])
        .build_typed(Example { users })
        .unwrap()
}

/// What the clients of `users.room` sent the mock, once they have sent something (within 5 s).
async fn received_by_the_room<A: courier::typed::ApiSpec>(
    mock: &Mock<A>,
) -> Vec<serde_json::Value> {
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let received = mock.received_at("users.room");
            if !received.is_empty() {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("a message within 5 s")
}

fn ada() -> User {
    User {
        id: 7,
        name: "Ada".into(),
    }
}

#[tokio::test]
async fn calls_are_answered_by_endpoint_and_variables_and_recorded() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().get()).returns(&ada());
    mock.on(|api| api.users().services().get())
        .with(&UserId(8))
        .answer(Answer::status(404).body_json(&json!({ "message": "no user 8" })));
    let caller = mock.caller();

    assert_eq!(caller.users().get(UserId(7)).await.unwrap(), ada());
    let missing = caller.users().get(UserId(8)).await.unwrap_err();
    assert_eq!(missing.status_code(), 404);
    assert_eq!(
        missing.http_error().unwrap().data,
        json!({ "message": "no user 8" }),
        "the answer's body is the error's"
    );

    mock.assert_called_with(|api| api.users().services().get(), &UserId(7));
    mock.assert_called_with(|api| api.users().services().get(), &UserId(8));
    let calls = mock.calls(|api| api.users().services().get());
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].method, http::Method::GET);
    assert_eq!(
        calls[0].uri.path(),
        "/users/7",
        "the request an upstream is sent"
    );
    assert!(calls.iter().all(|call| call.answered));

    let nothing = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        mock.assert_called_with(|api| api.users().services().get(), &UserId(9));
    }))
    .expect_err("never called with 9");
    let said = nothing.downcast_ref::<String>().unwrap();
    assert!(said.contains("`users.get` was not called with 9"), "{said}");
    assert!(said.contains("with: 7, 8"), "{said}");
}

#[tokio::test]
async fn a_call_nothing_answers_is_501_naming_it_and_listed() {
    let mock = Mock::new(api()).unwrap();
    let error = mock
        .caller()
        .users()
        .search(Search { q: "ada".into() })
        .await
        .unwrap_err();
    assert_eq!(error.status_code(), 501);
    let message = error.http_error().unwrap().data["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("`users.search`"), "{message}");
    assert!(message.contains(r#"{"q":"ada"}"#), "{message}");
    let unanswered = mock.unanswered();
    assert_eq!(unanswered.len(), 1);
    assert_eq!(unanswered[0].endpoint, "users.search");
    assert_eq!(unanswered[0].variables, json!({ "q": "ada" }));
}

#[tokio::test]
async fn a_sequence_is_answered_in_turn_and_a_read_is_retried_through_it() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().get()).answers([
        Answer::status(503),
        Answer::refused(),
        Answer::json(&ada()),
    ]);
    let caller = mock.caller();
    // The default retry policy retries a read on 503 and on a refused connection.
    assert_eq!(caller.users().get(UserId(7)).await.unwrap(), ada());
    assert_eq!(mock.calls(|api| api.users().services().get()).len(), 3);
    // The last answer answers every call after the sequence.
    assert_eq!(caller.users().get(UserId(7)).await.unwrap(), ada());
    assert_eq!(mock.calls(|api| api.users().services().get()).len(), 4);
}

#[tokio::test]
async fn a_refused_connection_is_a_network_error_after_the_retries() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().get())
        .answer(Answer::refused());
    let error = mock.caller().users().get(UserId(7)).await.unwrap_err();
    assert!(error.is_network(), "{error}");
    assert_eq!(error.status_code(), 0);
    let attempts = mock.calls(|api| api.users().services().get()).len();
    assert!(attempts > 1, "retried: {attempts} attempts");
}

#[tokio::test]
async fn a_write_is_retried_with_its_idempotency_key_kept() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().create())
        .answers([Answer::reset(), Answer::json(&ada())]);
    let created = mock
        .caller()
        .users()
        .create(NewUser { name: "Ada".into() })
        .await
        .unwrap();
    assert_eq!(created, ada());
    let calls = mock.calls(|api| api.users().services().create());
    assert_eq!(calls.len(), 2, "the write was sent again");
    let key = |i: usize| calls[i].headers.get("idempotency-key").cloned();
    assert!(key(0).is_some());
    assert_eq!(key(0), key(1), "with the same key");
    assert_eq!(calls[0].body, calls[1].body);
    assert_eq!(calls[0].variables, json!({ "name": "Ada" }));
}

#[tokio::test]
async fn two_reads_in_flight_share_one_call_to_the_mock() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().get())
        .delay(Duration::from_millis(100))
        .returns(&ada());
    let caller = mock.caller();
    let (a, b) = tokio::join!(caller.users().get(UserId(7)), caller.users().get(UserId(7)));
    assert_eq!((a.unwrap(), b.unwrap()), (ada(), ada()));
    assert_eq!(mock.calls(|api| api.users().services().get()).len(), 1);
}

#[tokio::test]
async fn a_slow_answer_meets_the_endpoints_timeout() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().slow())
        .delay(Duration::from_secs(5))
        .returns(&ada());
    let started = std::time::Instant::now();
    let error = mock.caller().users().slow(UserId(7)).await.unwrap_err();
    assert!(error.is_timeout(), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_newer_search_cancels_the_one_in_flight() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().search())
        .delay(Duration::from_millis(200))
        .returns(&vec![ada()]);
    let caller = mock.caller();
    let first = caller.users().search(Search { q: "a".into() });
    let second = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        caller.users().search(Search { q: "ad".into() }).await
    };
    let (first, second) = tokio::join!(first, second);
    // As in production: 499, cancelled by the newer call.
    let first = first.unwrap_err();
    assert_eq!(first.status_code(), 499);
    let code = &first.http_error().unwrap().data["error"]["code"];
    assert_eq!(code, "CANCELLED_BY_NEWER_CALL");
    assert_eq!(second.unwrap(), vec![ada()]);
    assert_eq!(mock.calls(|api| api.users().services().search()).len(), 2);
}

#[tokio::test]
async fn a_stream_is_opened_with_its_events_and_given_more() {
    let mock = Mock::new(api()).unwrap();
    let grace = User {
        id: 8,
        name: "Grace".into(),
    };
    mock.on(|api| api.users().services().changes())
        .events([ada()]);
    let mut events = mock.caller().users().changes().await.unwrap();
    assert_eq!(events.next().await.unwrap().unwrap().data, ada());
    assert_eq!(mock.push(|api| api.users().services().changes(), &grace), 1);
    assert_eq!(events.next().await.unwrap().unwrap().data, grace);
}

#[tokio::test]
async fn a_channel_is_opened_in_memory_given_messages_and_records_what_it_is_sent() {
    let mock = Mock::new(api()).unwrap();
    let hello = Chat {
        text: "hello".into(),
    };
    mock.on(|api| api.users().services().room())
        .with(&Room { room: "a".into() })
        .messages([hello.clone()]);
    let mut room = mock
        .caller()
        .users()
        .room(Room { room: "a".into() })
        .await
        .unwrap();
    assert_eq!(room.next().await.unwrap().unwrap(), hello);
    room.send(Chat { text: "hi".into() }).unwrap();
    let pushed = Chat {
        text: "later".into(),
    };
    assert_eq!(mock.push(|api| api.users().services().room(), &pushed), 1);
    assert_eq!(room.next().await.unwrap().unwrap(), pushed);
    let received = received_by_the_room(&mock).await;
    assert_eq!(received, [json!({ "text": "hi" })]);
    let calls = mock.calls(|api| api.users().services().room());
    assert_eq!(calls[0].variables, json!({ "room": "a" }));
    assert_eq!(calls[0].uri.path(), "/users/rooms/a");
}

#[tokio::test]
async fn behind_a_proxy_caller_the_mock_answers_the_proxy_wire() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().get()).returns(&ada());
    let caller = ProxyCaller::<Example>::source("http://app.test", "users", api())
        .mock(&mock)
        .build()
        .unwrap();
    assert_eq!(caller.users().get(UserId(7)).await.unwrap(), ada());
    let calls = mock.calls(|api| api.users().services().get());
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].variables, json!(7));
    assert_eq!(
        calls[0].uri.path(),
        "/api/request",
        "what the app server would be sent"
    );
    let missing = caller
        .users()
        .search(Search { q: "x".into() })
        .await
        .unwrap_err();
    assert_eq!(missing.status_code(), 501);
}

#[tokio::test]
async fn a_stream_refused_then_opened_takes_its_answers_in_turn() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().changes())
        .answers([Answer::status(503), Answer::events([ada()])]);
    // The refused opening is retried, as a read is, and the next attempt opens.
    let mut events = mock.caller().users().changes().await.unwrap();
    assert_eq!(events.next().await.unwrap().unwrap().data, ada());
    assert_eq!(mock.calls(|api| api.users().services().changes()).len(), 2);
}

#[tokio::test]
async fn behind_a_proxy_caller_a_channel_opens_and_its_hello_is_not_a_message() {
    let mock = Mock::new(api()).unwrap();
    let hello = Chat {
        text: "hello".into(),
    };
    mock.on(|api| api.users().services().room())
        .messages([hello.clone()]);
    let paths = courier::config::ProxyPaths {
        ws: Some("/api/ws".into()),
        ..courier::config::ProxyPaths::default()
    };
    let caller = ProxyCaller::<Example>::source("http://app.test", "users", api())
        .proxy_path(paths)
        .header("x-tenant", "acme")
        .mock(&mock)
        .build()
        .unwrap();
    let mut room = caller
        .users()
        .room(Room { room: "a".into() })
        .await
        .unwrap();
    assert_eq!(room.next().await.unwrap().unwrap(), hello);
    room.send(Chat { text: "hi".into() }).unwrap();
    let received = received_by_the_room(&mock).await;
    // The proxy caller's hello (its default headers) is courier's, not the channel's.
    assert_eq!(received, [json!({ "text": "hi" })]);
    let calls = mock.calls(|api| api.users().services().room());
    assert_eq!(calls[0].uri.path(), "/api/ws");
}

#[tokio::test]
async fn an_answers_headers_reach_the_error_and_reset_forgets_everything() {
    let mock = Mock::new(api()).unwrap();
    mock.on(|api| api.users().services().get())
        .answer(Answer::status(418).header("x-reason", "teapot"));
    let caller = mock.caller();
    let error = caller.users().get(UserId(7)).await.unwrap_err();
    let headers = &error.http_error().unwrap().headers;
    assert_eq!(headers["x-reason"], "teapot");
    assert_eq!(mock.all_calls().len(), 1);

    mock.reset();
    assert!(mock.all_calls().is_empty());
    let unanswered = caller.users().get(UserId(7)).await.unwrap_err();
    assert_eq!(
        unanswered.status_code(),
        501,
        "its answers are forgotten too"
    );
}

#[tokio::test]
async fn a_runtime_tree_is_mocked_by_dotted_path() {
    let mock = Mock::untyped(api().into_def()).unwrap();
    mock.on_path("users.get")
        .with(&json!(7))
        .returns(&json!({ "id": 7, "name": "Ada" }));
    mock.on_path("users.room")
        .answer(Answer::messages([json!({ "text": "hello" })]));
    let client = mock.client();

    let user = client.call("users.get", json!(7)).await.unwrap();
    assert_eq!(user.data["name"], "Ada");
    assert_eq!(mock.calls_at("users.get")[0].variables, json!(7));
    let other = client.call("users.get", json!(8)).await.unwrap_err();
    assert_eq!(other.status_code(), 501, "answered for 7 only");

    let mut room = client
        .channel("users.room", json!({ "room": "a" }), None)
        .await
        .unwrap();
    assert_eq!(
        room.next().await.unwrap().unwrap(),
        json!({ "text": "hello" })
    );
    assert_eq!(mock.push_at("users.room", &json!({ "text": "more" })), 1);
    assert_eq!(
        room.next().await.unwrap().unwrap(),
        json!({ "text": "more" })
    );
    room.send(json!({ "text": "hi" })).unwrap();
    let received = received_by_the_room(&mock).await;
    assert_eq!(received, [json!({ "text": "hi" })]);

    let unknown = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        mock.calls_at("users.nothing");
    }))
    .expect_err("no such endpoint");
    let said = unknown.downcast_ref::<String>().unwrap();
    assert!(
        said.contains("`users.nothing` is not an endpoint"),
        "{said}"
    );
}
