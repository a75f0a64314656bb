use super::*;
use futures_util::FutureExt;
use http::Response;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Mutex;
use tokio::sync::oneshot;
use tower::{service_fn, ServiceExt};

/// What releases one held call: to answer it, or to fail it with the error given.
type Release = oneshot::Sender<Result<(), &'static str>>;

/// An upstream whose calls each wait for a release of their own, handed out in call order, or
/// fail when asked to.
#[derive(Clone, Default)]
struct Held {
    waiting: Arc<Mutex<Vec<Release>>>,
}

impl Held {
    fn service(
        &self,
    ) -> impl Service<
        Request<()>,
        Response = Response<()>,
        Error = &'static str,
        Future = impl Future<Output = Result<Response<()>, &'static str>> + Send,
    > + Clone {
        let waiting = Arc::clone(&self.waiting);
        service_fn(move |_: Request<()>| {
            let (release, wait) = oneshot::channel();
            waiting.lock().unwrap().push(release);
            async move {
                match wait.await {
                    Ok(Ok(())) | Err(_) => Ok(Response::new(())),
                    Ok(Err(e)) => Err(e),
                }
            }
        })
    }

    /// Answers the oldest call still waiting, or fails it.
    fn answer(&self, outcome: Result<(), &'static str>) {
        let release = self.waiting.lock().unwrap().remove(0);
        release.send(outcome).unwrap();
    }
}

/// Calls `service` once, readied, and hands back its future unpolled.
async fn call<S>(service: &mut S) -> S::Future
where
    S: Service<Request<()>>,
    S::Error: std::fmt::Debug,
{
    service.ready().await.unwrap().call(Request::new(()))
}

#[tokio::test]
async fn a_call_over_the_bound_is_refused_at_once_and_the_next_after_an_answer_goes_through() {
    let upstream = Held::default();
    let layer = ShedLayer::new(2).retry_after(Duration::from_millis(1500));
    let mut shed = layer.layer(upstream.service());

    let mut first = Box::pin(call(&mut shed).await);
    let mut second = Box::pin(call(&mut shed).await);
    assert!((&mut first).now_or_never().is_none());
    assert!((&mut second).now_or_never().is_none());
    assert_eq!(layer.in_flight(), 2);

    // The third is refused without waiting, and says when to come back.
    let refused = call(&mut shed).await.now_or_never().unwrap().unwrap_err();
    let overloaded = refused.downcast_ref::<Overloaded>().unwrap();
    assert_eq!(overloaded.status(), http::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(overloaded.max_in_flight(), 2);
    assert_eq!(overloaded.retry_after(), Duration::from_millis(1500));
    assert_eq!(overloaded.retry_after_secs(), 2);
    assert_eq!(layer.in_flight(), 2, "a refused call takes no permit");

    upstream.answer(Ok(()));
    first.await.unwrap();
    assert_eq!(layer.in_flight(), 1);
    let third = call(&mut shed).await;
    upstream.answer(Ok(()));
    upstream.answer(Ok(()));
    second.await.unwrap();
    third.await.unwrap();
    assert_eq!(layer.in_flight(), 0);
}

#[tokio::test]
async fn a_failed_call_and_a_dropped_one_give_their_permits_back() {
    let upstream = Held::default();
    let layer = ShedLayer::new(1);
    let mut shed = layer.layer(upstream.service());

    let failing = call(&mut shed).await;
    upstream.answer(Err("upstream broke"));
    let error = failing.await.unwrap_err();
    assert_eq!(error.to_string(), "upstream broke");
    assert_eq!(layer.in_flight(), 0);

    let dropped = call(&mut shed).await;
    assert_eq!(layer.in_flight(), 1);
    drop(dropped);
    assert_eq!(layer.in_flight(), 0);

    let next = call(&mut shed).await;
    upstream.waiting.lock().unwrap().clear();
    next.await.unwrap();
}

#[tokio::test]
async fn every_service_of_one_layer_shares_its_bound() {
    let upstream = Held::default();
    let layer = ShedLayer::new(1);
    let mut one = layer.layer(upstream.service());
    let mut other = layer.layer(upstream.service()).boxed_clone();

    let held = call(&mut one).await;
    let refused = call(&mut other).await.await.unwrap_err();
    assert!(refused.is::<Overloaded>(), "{refused}");
    // A clone shares it too.
    let refused = call(&mut one.clone()).await.await.unwrap_err();
    assert!(refused.is::<Overloaded>(), "{refused}");

    upstream.answer(Ok(()));
    held.await.unwrap();
    let next = call(&mut other).await;
    assert_eq!(
        layer.in_flight(),
        1,
        "the other service takes the place given back"
    );
    drop(next);
    assert_eq!(layer.in_flight(), 0);
}

#[tokio::test]
async fn a_service_readied_but_not_called_takes_no_permit() {
    // What coalescing does for a follower: the stack is readied, then the leader's call is
    // shared and this service is never called.
    let layer = ShedLayer::new(1);
    let mut shed = layer.layer(service_fn(|_: Request<()>| async {
        Ok::<_, Infallible>(Response::new(()))
    }));
    for _ in 0..3 {
        shed.ready().await.unwrap();
    }
    assert_eq!(layer.in_flight(), 0);
    shed.ready()
        .await
        .unwrap()
        .call(Request::new(()))
        .await
        .unwrap();
}

#[test]
fn retry_after_is_whole_seconds_rounded_up_and_at_least_one() {
    let secs = |d: Duration| Overloaded::new(1, d).retry_after_secs();
    assert_eq!(secs(Duration::ZERO), 1);
    assert_eq!(secs(Duration::from_millis(1)), 1);
    assert_eq!(secs(Duration::from_secs(3)), 3);
    assert_eq!(secs(Duration::from_millis(3001)), 4);
    assert_eq!(
        ShedLayer::new(0).max_in_flight(),
        1,
        "a bound of none is a bound of one"
    );
}
