//! `ide-mcp bridge`: the tools of the IDE running for this directory, as a
//! stdio MCP server, so that the model sees all of them (the `claude` CLI
//! shows it only `getDiagnostics` and `executeCode` of an IDE's tools).
//!
//! The bridge finds the IDE as the CLI does ([`find_ides`]: the lockfile of
//! `CLAUDE_CODE_SSE_PORT`, else those whose folders hold the working
//! directory, the most recent first), connects to it as the CLI does
//! ([`link`]), and relays through the runtime's [`Relay`] seam: the
//! runtime's stdio server answers `initialize`, `ping` and both protocol
//! eras, bounds and cancels calls; the bridge serves the IDE's list and
//! forwards each call, and each request of the IDE's resources and prompts
//! (`resources/list`, `resources/templates/list`, `resources/read`,
//! `prompts/list`, `prompts/get`), which it advertises when the IDE did. With no IDE it still starts, lists what it last saw
//! for the workspace ([`cache`]) or the ide-mcp IDE's own tools, and
//! answers calls with what to do. An IDE that went away is found again on
//! the next call, and a list that changed is announced.

#[cfg(unix)]
pub mod cache;
pub mod link;
pub mod tools;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ide_mcp_lsp::outgoing::Gone;
use ide_mcp_lsp::sync::lock;
use ide_mcp_runtime::discovery::{FoundIde, find_ides};
use ide_mcp_runtime::lockfile::default_config_dir;
use ide_mcp_runtime::relay::{Relay, RelayFuture, RelayReply};
use ide_mcp_runtime::{Call, Notifier, Peer, Server};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::args::BridgeArgs;
use crate::run::BoxError;
use link::{Answer, CONNECT_TIMEOUT, Link};

#[cfg(not(unix))]
mod cache {
    //! No private directory of ours off Unix: nothing is remembered.
    use std::io;
    use std::path::Path;

    use serde_json::value::RawValue;

    #[derive(Clone, Debug)]
    pub struct Cache;

    impl Cache {
        pub fn private() -> io::Result<Self> {
            Err(io::ErrorKind::Unsupported.into())
        }

        pub fn load(&self, _: &Path, _: &Path) -> Option<Vec<Box<RawValue>>> {
            None
        }

        pub fn store(&self, _: &Path, _: &[String], _: &[Box<RawValue>]) -> io::Result<()> {
            Ok(())
        }
    }
}

use cache::Cache;

/// Where the bridge looks, and what it serves.
#[derive(Clone, Debug)]
pub struct BridgeOptions {
    /// The directory whose IDE is relayed (canonical).
    pub cwd: PathBuf,
    /// Claude Code's configuration directory; `None` when there is none
    /// (no home directory): then there is never an IDE.
    pub config_dir: Option<PathBuf>,
    /// `CLAUDE_CODE_SSE_PORT`: that IDE, whatever its folders.
    pub sse_port: Option<u16>,
    /// Every tool of the IDE, the CLI's own too (for other clients).
    pub all: bool,
    /// Where the tools last seen are remembered; `None`: nowhere.
    pub cache: Option<Cache>,
}

impl BridgeOptions {
    /// The options of this process: its working directory and environment.
    pub fn from_env(args: &BridgeArgs) -> std::io::Result<Self> {
        let cwd = std::env::current_dir()?.canonicalize()?;
        let sse_port = std::env::var("CLAUDE_CODE_SSE_PORT")
            .ok()
            .and_then(|port| port.trim().parse().ok());
        let cache = Cache::private()
            .inspect_err(|error| tracing::debug!(%error, "no cache of the tools seen"))
            .ok();
        Ok(Self {
            cwd,
            config_dir: default_config_dir(),
            sse_port,
            all: args.all,
            cache,
        })
    }
}

/// `ide-mcp bridge`: serves stdio until stdin ends, or SIGINT/SIGTERM.
pub async fn run(args: &BridgeArgs) -> Result<(), BoxError> {
    let stop = ide_mcp_runtime::shutdown_signal();
    let options = BridgeOptions::from_env(args)?;
    let bridge = Bridge::start(options).await;
    let server = Server::builder("ide-mcp-bridge", env!("CARGO_PKG_VERSION"))
        .notifier(bridge.notifier())
        .relay(Arc::new(bridge))
        .build()?;
    tokio::select! {
        result = server.serve_stdio() => result?,
        result = stop => result?,
    }
    Ok(())
}

/// The relay: the IDE's list and calls; see the [module documentation](self).
#[derive(Debug)]
pub struct Bridge {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: BridgeOptions,
    notifier: Notifier,
    /// The `tools/list` result served now.
    served: Mutex<Arc<[u8]>>,
    /// Which of `resources` and `prompts` the IDE last reached has.
    capabilities: Mutex<Capabilities>,
    /// The IDE's connection, while it lasts; held while (re)connecting, so
    /// that calls arriving meanwhile wait for the one attempt.
    link: tokio::sync::Mutex<Option<Arc<Link>>>,
}

impl Bridge {
    /// A bridge that has tried to reach its IDE once: it serves that IDE's
    /// list, else the list last seen for the directory, else the ide-mcp
    /// IDE's own tools.
    pub async fn start(options: BridgeOptions) -> Self {
        let seen = match (&options.cache, &options.config_dir) {
            (Some(cache), Some(config_dir)) => cache.load(config_dir, &options.cwd),
            _ => None,
        };
        let first = seen.unwrap_or_else(tools::first_time);
        let inner = Arc::new(Inner {
            served: Mutex::new(tools::served(&first, options.all)),
            capabilities: Mutex::new(Capabilities::default()),
            options,
            notifier: Notifier::new(),
            link: tokio::sync::Mutex::new(None),
        });
        // With nobody subscribed yet, a list found now is served silently.
        inner.link().await;
        Self { inner }
    }

    /// The notifier the server must push through (`list_changed`).
    pub fn notifier(&self) -> Notifier {
        self.inner.notifier.clone()
    }
}

impl Relay for Bridge {
    fn list_result(&self) -> Arc<[u8]> {
        Arc::clone(&self.inner.served())
    }

    fn call(&self, call: &Call<'_>, params: &str) -> RelayFuture {
        let inner = Arc::clone(&self.inner);
        let progress = call
            .progress_token()
            .and_then(|token| serde_json::from_str::<Value>(token.get()).ok())
            .zip(call.peer().cloned());
        let forwarded = forwarded_params(params);
        Box::pin(async move { inner.call(forwarded, progress).await })
    }

    fn has_capability(&self, capability: &str) -> bool {
        let capabilities = *lock(&self.inner.capabilities);
        match capability {
            "resources" => capabilities.resources,
            "prompts" => capabilities.prompts,
            _ => false,
        }
    }

    fn forward(&self, call: &Call<'_>, method: &str, params: Option<&str>) -> Option<RelayFuture> {
        let inner = Arc::clone(&self.inner);
        let progress = call
            .progress_token()
            .and_then(|token| serde_json::from_str::<Value>(token.get()).ok())
            .zip(call.peer().cloned());
        let method = method.to_owned();
        let forwarded = forwarded_params(params.unwrap_or("{}"));
        Some(Box::pin(async move {
            inner.forward(&method, forwarded, progress).await
        }))
    }
}

/// What the IDE has besides tools, as its `initialize` result said.
#[derive(Clone, Copy, Debug, Default)]
struct Capabilities {
    resources: bool,
    prompts: bool,
}

impl Inner {
    fn served(&self) -> Arc<[u8]> {
        Arc::clone(&lock(&self.served))
    }

    /// The IDE's live connection, made (again) when there is none.
    async fn link(&self) -> Option<Arc<Link>> {
        let mut slot = self.link.lock().await;
        if let Some(link) = slot.as_ref().filter(|link| link.is_alive()) {
            return Some(Arc::clone(link));
        }
        if slot.take().is_some() {
            tracing::info!("the IDE's connection is gone; looking for the IDE again");
        }
        let link = Arc::new(self.connect().await?);
        *slot = Some(Arc::clone(&link));
        Some(link)
    }

    /// Connects to the first IDE found that answers, and serves its list.
    async fn connect(&self) -> Option<Link> {
        let config_dir = self.options.config_dir.as_deref()?;
        let found = find_ides(config_dir, &self.options.cwd, self.options.sse_port);
        for ide in found {
            let attempt = async {
                let link = Link::connect(ide.port, &ide.auth_token, self.notifier.clone()).await?;
                let list = link.list_tools().await?;
                Ok::<_, std::io::Error>((link, list))
            };
            match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
                Ok(Ok((link, list))) => {
                    tracing::info!(ide = ide.ide_name, port = ide.port, folders = ?ide.workspace_folders, "connected to the IDE");
                    *lock(&self.capabilities) = Capabilities {
                        resources: link.has_capability("resources"),
                        prompts: link.has_capability("prompts"),
                    };
                    self.serve_list(config_dir, &ide, &list);
                    return Some(link);
                }
                Ok(Err(error)) => {
                    tracing::warn!(port = ide.port, %error, "the IDE could not be reached");
                }
                Err(_) => tracing::warn!(port = ide.port, "the IDE did not answer in time"),
            }
        }
        None
    }

    /// Serves the list `ide` answered, remembers it, and tells the clients
    /// when it differs from the one served so far.
    fn serve_list(&self, config_dir: &Path, ide: &FoundIde, list: &RawValue) {
        let Some(entries) = tools::entries(list.get()) else {
            tracing::warn!(
                port = ide.port,
                "the IDE's tool list is not one; the last one is kept"
            );
            return;
        };
        if let Some(cache) = &self.options.cache
            && let Err(error) = cache.store(config_dir, &ide.workspace_folders, &entries)
        {
            tracing::debug!(%error, "the tools seen could not be remembered");
        }
        let list = tools::served(&entries, self.options.all);
        let changed = {
            let mut served = lock(&self.served);
            let changed = **served != *list;
            *served = list;
            changed
        };
        if changed {
            tracing::info!("the IDE's tools differ from those listed: list_changed");
            self.notifier
                .notify("notifications/tools/list_changed", &serde_json::Map::new());
        }
    }

    /// Forwards one call to the IDE, reconnecting first when needed.
    async fn call(&self, params: Box<str>, progress: Option<(Value, Peer)>) -> RelayReply {
        let Some(link) = self.link().await else {
            return error_result(&format!(
                "no IDE for {} is running: start your editor with `ide-mcp lsp-proxy`, or `ide-mcp serve`",
                self.options.cwd.display()
            ));
        };
        match link.request("tools/call", &params, progress).await {
            Ok(Answer::Result(result)) => RelayReply::Result(result),
            Ok(Answer::Error(error)) => RelayReply::Error(error),
            Err(Gone) => error_result(&format!(
                "the IDE for {} closed its connection before it answered; call again to reach it once it runs",
                self.options.cwd.display()
            )),
        }
    }
}

impl Inner {
    /// Forwards one resources or prompts request to the IDE, reconnecting
    /// first when needed; its answer, or an error (-32603) saying there is
    /// no IDE to ask.
    async fn forward(
        &self,
        method: &str,
        params: Box<str>,
        progress: Option<(Value, Peer)>,
    ) -> RelayReply {
        let Some(link) = self.link().await else {
            return error_reply(&format!(
                "no IDE for {} is running: start your editor with `ide-mcp lsp-proxy`, or `ide-mcp serve`",
                self.options.cwd.display()
            ));
        };
        match link.request(method, &params, progress).await {
            Ok(Answer::Result(result)) => RelayReply::Result(result),
            Ok(Answer::Error(error)) => RelayReply::Error(error),
            Err(Gone) => error_reply(&format!(
                "the IDE for {} closed its connection before it answered; ask again to reach it once it runs",
                self.options.cwd.display()
            )),
        }
    }
}

/// A JSON-RPC error (-32603, internal) saying `message`.
fn error_reply(message: &str) -> RelayReply {
    let error = serde_json::json!({"code": -32603, "message": message});
    RelayReply::Error(RawValue::from_string(error.to_string()).expect("serialized JSON is JSON"))
}

/// A tool result with `isError: true` saying `text`.
fn error_result(text: &str) -> RelayReply {
    let result = serde_json::json!({"content": [{"type": "text", "text": text}], "isError": true});
    RelayReply::Result(RawValue::from_string(result.to_string()).expect("serialized JSON is JSON"))
}

/// The params of a call as the IDE gets them: as the client sent them,
/// less the keys of a 2026-07-28 request's `_meta` (its protocol version,
/// client info and capabilities), which belong to the client's connection
/// to us: the IDE's connection is a 2025-11-25 session of ours.
fn forwarded_params(params: &str) -> Box<str> {
    const STATELESS_PREFIX: &str = "io.modelcontextprotocol/";
    type Members = BTreeMap<String, Box<RawValue>>;
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Members>,
    }
    let stateless = serde_json::from_str::<Params>(params)
        .ok()
        .and_then(|p| p.meta)
        .is_some_and(|meta| meta.keys().any(|key| key.starts_with(STATELESS_PREFIX)));
    if !stateless {
        return params.into();
    }
    // Rebuilt member by member, each value's text kept as sent.
    let Ok(mut members) = serde_json::from_str::<Members>(params) else {
        return params.into();
    };
    if let Some(meta) = members.remove("_meta")
        && let Ok(mut meta) = serde_json::from_str::<Members>(meta.get())
    {
        meta.retain(|key, _| !key.starts_with(STATELESS_PREFIX));
        if !meta.is_empty() {
            let meta = serde_json::to_string(&meta).expect("raw values serialize");
            members.insert(
                "_meta".to_owned(),
                RawValue::from_string(meta).expect("serialized JSON is JSON"),
            );
        }
    }
    serde_json::to_string(&members)
        .expect("raw values serialize")
        .into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_stateless_call_s_meta_stays_with_the_bridge() {
        let plain = r#"{"name":"t","arguments":{"n":1.50},"_meta":{"progressToken":7,"claudecode/toolUseId":"u"}}"#;
        assert_eq!(&*forwarded_params(plain), plain);
        let stateless = r#"{"name":"t","arguments":{"n":1.50},"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"x":[1]}}"#;
        let forwarded = forwarded_params(stateless);
        assert_eq!(
            &*forwarded,
            r#"{"_meta":{"progressToken":"p","x":[1]},"arguments":{"n":1.50},"name":"t"}"#
        );
        let bare =
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        assert_eq!(
            serde_json::from_str::<Value>(&forwarded_params(bare)).unwrap(),
            json!({"name": "t"})
        );
    }
}
