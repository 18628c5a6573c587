//! Whether a running server still answers: the probe of the
//! [module documentation](super), over any [`Probed`] so that its timing is
//! tested on a fake with tokio's paused clock.

use std::future::Future;

use super::options::{PROBE_BUSY_WINDOWS, PROBE_METHOD, Probe};

/// What the probe needs of a server.
pub(crate) trait Probed {
    /// Sends the probe request; resolves at its answer, whatever it is.
    /// Dropped unanswered, the request is forgotten.
    fn ping(&self) -> impl Future<Output = ()> + Send + '_;
    /// How many messages the server has sent so far: any of them shows it
    /// is not stuck.
    fn heard(&self) -> u64;
}

/// Probes `peer` every `probe.interval` until it is hung; resolves then,
/// with the reason for the log. A probe unanswered at its deadline declares
/// it hung, unless the server sent other messages meanwhile (busy, e.g.
/// publishing while it indexes): then the probe gets another deadline, up
/// to [`PROBE_BUSY_WINDOWS`] in all.
pub(crate) async fn hung(peer: &impl Probed, probe: Probe) -> String {
    loop {
        tokio::time::sleep(probe.interval).await;
        let ping = peer.ping();
        tokio::pin!(ping);
        let sent = tokio::time::Instant::now();
        let mut heard = peer.heard();
        let mut windows = 0;
        while tokio::time::timeout(probe.timeout, &mut ping)
            .await
            .is_err()
        {
            windows += 1;
            let now = peer.heard();
            if now == heard {
                return format!(
                    "no answer to `{PROBE_METHOD}` within {:?}, and no other message",
                    probe.timeout * windows
                );
            }
            if windows >= PROBE_BUSY_WINDOWS {
                return format!(
                    "no answer to `{PROBE_METHOD}` within {:?}, though it sends other messages",
                    probe.timeout * windows
                );
            }
            heard = now;
        }
        tracing::debug!("`{PROBE_METHOD}` answered in {:?}", sent.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;

    const PROBE: Probe = Probe {
        interval: Duration::from_secs(30),
        timeout: Duration::from_secs(10),
    };

    /// A server that answers each probe after `delay` (never: `None`).
    #[derive(Default)]
    struct Fake {
        delay: Option<Duration>,
        pings: AtomicU32,
        heard: Arc<AtomicU64>,
    }

    impl Probed for Fake {
        fn ping(&self) -> impl Future<Output = ()> + Send + '_ {
            self.pings.fetch_add(1, Ordering::SeqCst);
            async move {
                match self.delay {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => std::future::pending().await,
                }
                self.heard.fetch_add(1, Ordering::SeqCst);
            }
        }

        fn heard(&self) -> u64 {
            self.heard.load(Ordering::SeqCst)
        }
    }

    /// Sends a message every `every`, as a server publishing while it works.
    fn chatter(heard: &Arc<AtomicU64>, every: Duration) -> tokio::task::JoinHandle<()> {
        let heard = Arc::clone(heard);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                heard.fetch_add(1, Ordering::SeqCst);
            }
        })
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_answers_in_time_is_probed_on_and_on() {
        let fake = Fake {
            delay: Some(Duration::from_millis(9_999)),
            ..Fake::default()
        };
        let outcome = tokio::time::timeout(Duration::from_mins(10), hung(&fake, PROBE)).await;
        assert!(outcome.is_err(), "{outcome:?}");
        // One probe per interval plus its answer's time.
        assert_eq!(fake.pings.load(Ordering::SeqCst), 15);
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_server_is_hung_at_the_first_deadline() {
        let fake = Fake::default();
        let start = Instant::now();
        let why = hung(&fake, PROBE).await;
        assert_eq!(start.elapsed(), PROBE.interval + PROBE.timeout);
        assert_eq!(fake.pings.load(Ordering::SeqCst), 1);
        assert!(why.contains("`$/ide-mcp/ping`"), "{why}");
        assert!(why.contains("no other message"), "{why}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_server_gets_more_deadlines_but_not_forever() {
        // Late but talking meanwhile: alive.
        let slow = Fake {
            delay: Some(PROBE.timeout * 3),
            ..Fake::default()
        };
        let talking = chatter(&slow.heard, Duration::from_secs(1));
        let outcome =
            tokio::time::timeout((PROBE.interval + PROBE.timeout * 3) * 4, hung(&slow, PROBE))
                .await;
        assert!(outcome.is_err(), "{outcome:?}");
        assert!(slow.pings.load(Ordering::SeqCst) >= 3);
        talking.abort();

        // Talking but never answering: hung after the busy windows.
        let stuck = Fake::default();
        let talking = chatter(&stuck.heard, Duration::from_secs(1));
        let start = Instant::now();
        let why = hung(&stuck, PROBE).await;
        assert_eq!(
            start.elapsed(),
            PROBE.interval + PROBE.timeout * PROBE_BUSY_WINDOWS
        );
        assert!(why.contains("though it sends other messages"), "{why}");
        talking.abort();

        // Talking, then silent: hung at the first deadline without news.
        let quiet = Fake::default();
        let talking = chatter(&quiet.heard, Duration::from_secs(1));
        let stop = tokio::spawn(async move {
            tokio::time::sleep(PROBE.interval + PROBE.timeout * 2 + Duration::from_secs(5)).await;
            talking.abort();
        });
        let start = Instant::now();
        hung(&quiet, PROBE).await;
        assert_eq!(start.elapsed(), PROBE.interval + PROBE.timeout * 4);
        stop.await.unwrap();
    }
}
