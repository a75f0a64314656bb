use super::*;
use futures_util::task::noop_waker_ref;
use std::net::Ipv4Addr;

const ONE: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
const TWO: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

fn closing(place: &Place) -> bool {
    place
        .poll_closing(&mut Context::from_waker(noop_waker_ref()))
        .is_ready()
}

#[test]
fn the_default_is_half_of_what_the_descriptor_limit_leaves() {
    assert_eq!(default_max(Some(256)), 96);
    assert_eq!(default_max(Some(20_480)), 10_208);
    assert_eq!(default_max(Some(40)), MIN_MAX, "however low the limit");
    assert_eq!(default_max(None), FALLBACK_MAX);
    let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                  Max processes             95413                95413                processes \n\
                  Max open files            1024                 524288               files     \n";
    assert_eq!(soft_open_files(limits), Some(1024));
    let unlimited = "Max open files            unlimited            unlimited            files\n";
    assert_eq!(soft_open_files(unlimited), None);
    assert_eq!(soft_open_files("Max processes 10 10 processes\n"), None);
}

#[test]
fn at_the_bound_the_oldest_idle_connection_makes_room_and_a_busy_one_never_does() {
    let places = Places::new(3, None);
    let oldest = places.admit(ONE).unwrap();
    let answering = places.admit(ONE).unwrap();
    let busy = answering.busy();
    let newest = places.admit(ONE).unwrap();
    assert_eq!(places.held(), 3);

    // The fourth takes the oldest idle one's place: the busy one is passed over.
    let fourth = places.admit(TWO).unwrap();
    assert!(
        closing(&oldest),
        "the oldest idle connection is told to close"
    );
    assert!(
        !closing(&answering),
        "a connection answering a request is not"
    );
    assert!(!closing(&newest));
    assert_eq!(
        places.held(),
        3,
        "the closing one's place went to the new one"
    );

    // Its socket closing later gives nothing back twice.
    drop(oldest);
    assert_eq!(places.held(), 3);

    // Every connection busy: no room.
    let _busy = [newest.busy(), fourth.busy()];
    assert_eq!(places.admit(TWO).unwrap_err(), NoPlace::Full);
    drop(busy);
    let fifth = places.admit(TWO).unwrap();
    assert!(closing(&answering), "idle again, it is the oldest");
    assert!(!closing(&fifth));
}

#[test]
fn a_connection_marked_closing_finishes_the_request_it_took_since() {
    let places = Places::new(1, None);
    let first = places.admit(ONE).unwrap();
    let _second = places.admit(ONE).unwrap();
    assert!(closing(&first));
    // A request read in the same moment is answered before the connection closes.
    let late = first.busy();
    assert!(!closing(&first));
    drop(late);
    assert!(closing(&first));
}

#[test]
fn over_its_own_bound_an_address_makes_room_among_its_own_connections_only() {
    let places = Places::new(100, NonZeroUsize::new(2));
    let other = places.admit(TWO).unwrap();
    let a = places.admit(ONE).unwrap();
    let b = places.admit(ONE).unwrap();
    let c = places.admit(ONE).unwrap();
    assert!(
        !closing(&other),
        "another address's idle connection is not taken"
    );
    assert!(closing(&a));
    assert!(!closing(&b));

    let _busy = [b.busy(), c.busy()];
    assert_eq!(places.admit(ONE).unwrap_err(), NoPlace::ClientFull);
    // Another address is not held up by it.
    let _third = places.admit(TWO).unwrap();
    let _fourth = places.admit(TWO).unwrap();
    assert!(
        closing(&other),
        "over its own bound, TWO's oldest idle one makes room"
    );
}

#[test]
fn a_channel_holds_its_place_after_its_connection_task_is_gone() {
    let places = Places::new(1, None);
    let place = places.admit(ONE).unwrap();
    let socket = place.busy();
    drop(place);
    assert_eq!(places.held(), 1);
    assert_eq!(places.admit(TWO).unwrap_err(), NoPlace::Full);
    drop(socket);
    assert_eq!(places.held(), 0);
    places.admit(TWO).unwrap();
}

#[tokio::test]
async fn a_new_connection_waits_for_a_place_while_every_one_is_busy() {
    let places = Places::new(1, None);
    let held = places.admit(ONE).unwrap();
    let busy = held.busy();
    let waiting = tokio::spawn({
        let places = Arc::clone(&places);
        async move { places.place(TWO).await.is_some() }
    });
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(!waiting.is_finished(), "no place is free");
    drop(busy);
    drop(held);
    let admitted = tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
        .await
        .expect("a place given back wakes the waiting accept")
        .unwrap();
    assert!(admitted);
}

#[tokio::test]
async fn the_task_of_a_connection_marked_closing_is_woken() {
    let places = Places::new(1, None);
    let first = places.admit(ONE).unwrap();
    let task = tokio::spawn({
        let first = first.clone();
        async move { std::future::poll_fn(|cx| first.poll_closing(cx)).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let _second = places.admit(TWO).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), task)
        .await
        .expect("woken when its place is taken")
        .unwrap();
}
