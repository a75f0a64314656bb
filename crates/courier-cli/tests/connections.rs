//! `courier serve`, the real binary, under a file-descriptor limit of 256 (`prlimit`): one
//! address holding 10,000 idle connections does not keep another client's call out. The bound
//! on open connections is the default one, derived from that limit (96 places); at the bound
//! each new connection takes the place of the oldest idle one. The bounds from the flags and
//! the file's `[proxy]` keys, the flag winning.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// How many idle connections the attacking address opens, if this process may hold them.
const IDLE: usize = 10_000;

/// Raises this process's soft limit on open files to its hard limit (`prlimit` on its own
/// pid), and says how many idle connections it may then hold besides what it needs.
fn room_for_idle_connections() -> usize {
    let pid = std::process::id().to_string();
    let hard = std::process::Command::new("prlimit")
        .args([
            "--pid",
            &pid,
            "--nofile",
            "--output",
            "HARD",
            "--noheadings",
        ])
        .output()
        .expect("prlimit (util-linux) runs");
    let hard: usize = String::from_utf8_lossy(&hard.stdout)
        .trim()
        .parse()
        .unwrap_or(usize::MAX);
    let raised = std::process::Command::new("prlimit")
        .args(["--pid", &pid, &format!("--nofile={hard}:{hard}")])
        .status()
        .expect("prlimit (util-linux) runs");
    assert!(raised.success(), "could not raise the open-files limit");
    IDLE.min(hard.saturating_sub(256))
}

#[tokio::test]
async fn ten_thousand_idle_connections_from_one_address_do_not_keep_another_clients_call_out() {
    let idle_count = room_for_idle_connections();
    let backend = courier_test_support::users_backend().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    std::fs::write(&config, courier_test_support::users_source(backend)).unwrap();
    let mut child = tokio::process::Command::new("prlimit")
        .args([
            "--nofile=256:256",
            "--",
            env!("CARGO_BIN_EXE_courier"),
            "serve",
        ])
        .args([
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let proxy = courier_test_support::listening_on(&mut child).await;

    let started = Instant::now();
    let mut idle = Vec::with_capacity(idle_count);
    for _ in 0..idle_count {
        idle.push(TcpStream::connect(proxy).await.unwrap());
    }
    eprintln!(
        "{idle_count} idle connections from 127.0.0.1 opened in {:?}",
        started.elapsed()
    );
    // A connection the kernel has completed waits in the listener's accept queue until the
    // proxy takes it; while that queue is full the kernel drops new SYNs, and a client retries
    // after a second, however quickly the proxy then answers. The attack's last connections
    // are taken (and idle ones closed for them) before the other client comes.
    let drained = Instant::now();
    while accept_queue(proxy) > 0 {
        assert!(
            drained.elapsed() < Duration::from_secs(30),
            "the proxy still has {} connections to accept after 30 s",
            accept_queue(proxy)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eprintln!("accept queue drained in {:?}", drained.elapsed());

    // Another address's call, on a connection of its own, is answered at once.
    for id in 1..=3 {
        let socket = TcpSocket::new_v4().unwrap();
        socket
            .bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), 0))
            .unwrap();
        let started = Instant::now();
        let mut tcp = socket.connect(proxy).await.unwrap();
        let request = format!(
            "GET /api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A{id}%7D HTTP/1.1\r\n\
             host: app\r\nconnection: close\r\n\r\n"
        );
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer))
            .await
            .expect("answered within 5 s")
            .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with(&format!("{{\"id\":{id}}}")), "{answer}");
        let took = started.elapsed();
        eprintln!("the other client's call {id} took {took:?}");
        assert!(took < Duration::from_secs(1), "{took:?}");
    }

    // The proxy holds no more than its places: the idle connections beyond were closed.
    let mut open = 0;
    for tcp in idle.iter_mut().rev().take(200) {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_millis(5), tcp.read(&mut byte)).await;
        if read.is_err() {
            open += 1;
        }
    }
    assert!(
        open <= 96,
        "{open} of the 200 newest idle connections still open"
    );
    assert!(child.try_wait().unwrap().is_none(), "the proxy is still up");
}

/// How many completed connections wait in the accept queue of the IPv4 listener on `addr`
/// (for a listening socket, `/proc/net/tcp`'s `rx_queue` is that queue's length).
fn accept_queue(addr: SocketAddr) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp is readable");
    let local = format!(":{:04X}", addr.port());
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let listening = fields.get(3) == Some(&"0A");
            let ours = fields.get(1).is_some_and(|a| a.ends_with(&local));
            let queues = fields.get(4)?;
            (listening && ours).then(|| queues.split_once(':'))?
        })
        .map(|(_, rx)| usize::from_str_radix(rx, 16).unwrap_or(0))
        .sum()
}

/// `courier serve` on a file with `proxy` as its `[proxy]` table and `extra` arguments; the
/// child and the address it listens on.
async fn serve_with(
    dir: &tempfile::TempDir,
    proxy: &str,
    extra: &[&str],
) -> (tokio::process::Child, SocketAddr) {
    let config = dir.path().join("courier.toml");
    std::fs::write(
        &config,
        format!("[proxy]\n{proxy}\n[sources.demo]\nbase_url = \"http://127.0.0.1:9\"\n"),
    )
    .unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args([
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let addr = courier_test_support::listening_on(&mut child).await;
    (child, addr)
}

/// Whether the server closed `tcp` within 2 s.
async fn closed(tcp: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(Duration::from_secs(2), tcp.read(&mut byte)).await,
        Ok(Ok(0) | Err(_))
    )
}

#[tokio::test]
async fn the_bounds_come_from_the_flags_and_the_file_the_flag_winning() {
    let dir = tempfile::tempdir().unwrap();
    // The file's bound per address: a second idle connection from it closes the first.
    let (_child, proxy) = serve_with(&dir, "max_connections_per_client = 1", &[]).await;
    let mut first = TcpStream::connect(proxy).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut second = TcpStream::connect(proxy).await.unwrap();
    assert!(
        closed(&mut first).await,
        "the oldest idle connection makes room"
    );
    assert!(!closed(&mut second).await);

    // The flags win over the file: three places in all, none per address.
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--max-connections",
        "3",
        "--max-connections-per-client",
        "5",
    ];
    let (_child, proxy) = serve_with(&dir, "max_connections_per_client = 1", &flags).await;
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(TcpStream::connect(proxy).await.unwrap());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut fourth = TcpStream::connect(proxy).await.unwrap();
    assert!(
        closed(&mut open[0]).await,
        "the fourth takes the oldest's place"
    );
    assert!(!closed(&mut open[1]).await);
    assert!(!closed(&mut fourth).await);
}
