//! A real Redis for the tests of the Redis topic bus: `redis-server` on a free port of
//! 127.0.0.1, stopped and started again on that port when a test needs Redis to go away.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of the test's own, persisting nothing; killed when dropped.
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts `redis-server` on a free port and waits until it answers.
    ///
    /// # Panics
    ///
    /// When `redis-server` is not installed (the README's test command installs it) or does not
    /// answer within 10 s: the test cannot go on without it.
    pub fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port of 127.0.0.1")
            .port();
        let mut server = Self { port, child: None };
        server.run();
        server
    }

    /// Where it listens, as a Redis URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Stops it: every connection to it drops.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, empty, and waits until it answers.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// Sends one command in Redis's inline form and returns its reply's first line.
    ///
    /// # Panics
    ///
    /// When the server does not answer.
    pub fn command(&self, command: &str) -> String {
        let mut tcp = TcpStream::connect(("127.0.0.1", self.port)).expect("Redis answers");
        tcp.set_read_timeout(Some(Duration::from_secs(5))).ok();
        tcp.write_all(format!("{command}\r\n").as_bytes())
            .expect("the command is sent");
        let mut reply = Vec::new();
        let mut buf = [0u8; 4096];
        while !reply.ends_with(b"\r\n") {
            let n = tcp.read(&mut buf).expect("a reply");
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&reply).into_owned()
    }

    /// How many connections subscribe to `channel` (`PUBSUB NUMSUB`).
    pub fn subscribers(&self, channel: &str) -> usize {
        let mut tcp = TcpStream::connect(("127.0.0.1", self.port)).expect("Redis answers");
        tcp.set_read_timeout(Some(Duration::from_secs(5))).ok();
        let request = format!(
            "*3\r\n$6\r\nPUBSUB\r\n$6\r\nNUMSUB\r\n${}\r\n{channel}\r\n",
            channel.len()
        );
        tcp.write_all(request.as_bytes())
            .expect("the command is sent");
        // `*2 $len channel :count`: the count is the last line.
        let mut reply = String::new();
        let mut buf = [0u8; 4096];
        while reply.matches("\r\n").count() < 4 {
            let n = tcp.read(&mut buf).expect("a reply");
            if n == 0 {
                break;
            }
            reply.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        reply
            .lines()
            .filter_map(|line| line.strip_prefix(':'))
            .next_back()
            .and_then(|count| count.parse().ok())
            .unwrap_or(0)
    }

    fn run(&mut self) {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server on the PATH (Debian: apt-get install redis-server)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut tcp) = TcpStream::connect(("127.0.0.1", self.port)) {
                tcp.set_read_timeout(Some(Duration::from_secs(1))).ok();
                let mut pong = [0u8; 7];
                if tcp.write_all(b"PING\r\n").is_ok()
                    && tcp.read_exact(&mut pong).is_ok()
                    && &pong == b"+PONG\r\n"
                {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
