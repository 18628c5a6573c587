//! Building a server: its identity, its states, its tools.

use std::sync::Arc;

use crate::context::ToolContext;
use crate::notify::Notifier;
use crate::registry::{Registry, RegistryError};
use crate::relay::{Relay, RelayRef};

/// The name and version a server reports in `initialize` (`serverInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerInfo {
    /// The host's name, e.g. the editor's.
    pub name: String,
    /// The host's version.
    pub version: String,
}

/// Configures and builds a [`Server`].
#[derive(Debug)]
pub struct ServerBuilder {
    info: ServerInfo,
    instructions: Option<String>,
    context: ToolContext,
    registry: Option<RegistryRef>,
    relay: Option<RelayRef>,
    notifier: Option<Notifier>,
}

/// Why a server could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// The registry is invalid (duplicate names, unusable schemas).
    Registry(RegistryError),
    /// Registered tools need states the builder was not given.
    MissingStates(Vec<MissingStateForTool>),
}

/// A tool (or a resource, a prompt) and the state type it needs but the server lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingStateForTool {
    /// What needs it: `"tool"`, `"resource"` or `"prompt"`.
    pub kind: &'static str,
    /// The tool's name (a resource's URI, a prompt's name).
    pub tool: &'static str,
    /// The missing state's type.
    pub type_name: &'static str,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Registry(err) => write!(f, "the tool registry is invalid:\n{err}"),
            Self::MissingStates(missing) => {
                for (i, m) in missing.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(
                        f,
                        "{} `{}` needs a state of type `{}`, but the server was not given one; add it with `ServerBuilder::state`",
                        m.kind, m.tool, m.type_name
                    )?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for BuildError {}

#[derive(Clone, Debug)]
enum RegistryRef {
    Global(&'static Registry),
    Owned(Arc<Registry>),
}

impl std::ops::Deref for RegistryRef {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        match self {
            Self::Global(r) => r,
            Self::Owned(r) => r,
        }
    }
}

impl ServerBuilder {
    /// A builder for a server that calls itself `name` `version` in `initialize`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: ServerInfo {
                name: name.into(),
                version: version.into(),
            },
            instructions: None,
            context: ToolContext::new(),
            registry: None,
            relay: None,
            notifier: None,
        }
    }

    /// Gives tools a state, taken by `&T` context parameters.
    pub fn state<T: Send + Sync + 'static>(mut self, state: T) -> Self {
        self.context = self.context.with(state);
        self
    }

    /// Gives tools a state already shared behind an `Arc`.
    pub fn state_arc<T: Send + Sync + 'static>(mut self, state: Arc<T>) -> Self {
        self.context = self.context.with_arc(state);
        self
    }

    /// The `instructions` sent in `initialize`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Serves these tools instead of every linked one.
    pub fn registry(mut self, registry: Arc<Registry>) -> Self {
        self.registry = Some(RegistryRef::Owned(registry));
        self
    }

    /// Serves `tools/list` and `tools/call` through `relay` instead of a
    /// registry (see [`relay`](crate::relay)): the linked tools are not
    /// served, and `initialize` says `tools.listChanged: true`.
    pub fn relay(mut self, relay: Arc<dyn Relay>) -> Self {
        self.relay = Some(RelayRef(relay));
        self
    }

    /// Pushes the server's notifications through `notifier`, made
    /// beforehand: for a [`relay`](Self::relay) that announces changes of
    /// its list (`notifications/tools/list_changed`) from outside any call.
    pub fn notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// Checks the registry and the states, and builds the server.
    pub fn build(self) -> Result<Server, BuildError> {
        let registry = match (self.registry, &self.relay) {
            (Some(r), _) => r,
            // A relay serves the tools: the linked ones need no states.
            (None, Some(_)) => RegistryRef::Owned(Arc::new(
                Registry::from_tools([]).map_err(BuildError::Registry)?,
            )),
            (None, None) => RegistryRef::Global(
                Registry::global().map_err(|e| BuildError::Registry(e.clone()))?,
            ),
        };
        let missing = missing_states(&self.context, &registry);
        if !missing.is_empty() {
            return Err(BuildError::MissingStates(missing));
        }
        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                context: self.context,
                registry,
                relay: self.relay,
                notifier: self.notifier.unwrap_or_default(),
            }),
        })
    }
}

/// The states the registry's items need that the builder was not given.
fn missing_states(context: &ToolContext, registry: &Registry) -> Vec<MissingStateForTool> {
    let resources = registry
        .resources()
        .iter()
        .copied()
        .chain(registry.resource_templates().iter().map(|t| t.def))
        .map(|def| ("resource", def.uri, def.states));
    let prompts = registry
        .prompts()
        .iter()
        .map(|p| ("prompt", p.def.name, p.def.states));
    let items = registry
        .tools()
        .iter()
        .map(|t| ("tool", t.def.name, t.def.states))
        .chain(resources)
        .chain(prompts);
    let mut missing = Vec::new();
    let mut states = Vec::new();
    for (kind, name, needs) in items {
        states.clear();
        needs(&mut states);
        // A resource's lister may need the same state as its reader.
        states.sort_by_key(|req| req.type_name);
        states.dedup_by_key(|req| req.type_name);
        for req in states.iter().filter(|req| !context.contains(req)) {
            missing.push(MissingStateForTool {
                kind,
                tool: name,
                type_name: req.type_name,
            });
        }
    }
    missing
}

/// A built server: cheap to clone, shared by every connection and transport.
#[derive(Clone, Debug)]
pub struct Server {
    inner: Arc<ServerInner>,
}

#[derive(Debug)]
struct ServerInner {
    info: ServerInfo,
    instructions: Option<String>,
    context: ToolContext,
    registry: RegistryRef,
    relay: Option<RelayRef>,
    notifier: Notifier,
}

impl Server {
    /// Starts configuring a server.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }

    /// The name and version reported in `initialize`.
    pub fn info(&self) -> &ServerInfo {
        &self.inner.info
    }

    /// The `instructions` reported in `initialize`.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// The states tools are called with.
    pub fn context(&self) -> &ToolContext {
        &self.inner.context
    }

    /// The handle that pushes notifications to every connected, initialized client.
    pub fn notifier(&self) -> &Notifier {
        &self.inner.notifier
    }

    /// The tools served (none when a [`relay`](ServerBuilder::relay) serves them).
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The relay that serves the tools, if the server was built with one.
    pub fn relay(&self) -> Option<&Arc<dyn Relay>> {
        self.inner.relay.as_ref().map(|relay| &relay.0)
    }
}
