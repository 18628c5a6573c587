//! The [`LanguageServers`] port, through which the live LSP tools ask the
//! host's language servers, and the questions it takes.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::deny::RuleSet;

/// What a live LSP tool asks the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LspFeature {
    /// `textDocument/references`.
    References,
    /// `textDocument/definition`.
    Definition,
    /// `textDocument/implementation`.
    Implementation,
    /// `textDocument/hover`.
    Hover,
    /// `textDocument/documentSymbol`.
    DocumentSymbols,
    /// `workspace/symbol`.
    WorkspaceSymbols,
    /// `textDocument/prepareCallHierarchy`, then `callHierarchy/incomingCalls`
    /// or `callHierarchy/outgoingCalls`.
    CallHierarchy,
    /// `textDocument/rename` (after `textDocument/prepareRename` where the
    /// server has it).
    Rename,
    /// `textDocument/codeAction` (and `codeAction/resolve`).
    CodeActions,
}

impl LspFeature {
    /// Every feature.
    pub const ALL: [Self; 9] = [
        Self::References,
        Self::Definition,
        Self::Implementation,
        Self::Hover,
        Self::DocumentSymbols,
        Self::WorkspaceSymbols,
        Self::CallHierarchy,
        Self::Rename,
        Self::CodeActions,
    ];

    /// The LSP method (the first one asked; the one a server registers
    /// dynamically).
    pub fn method(self) -> &'static str {
        match self {
            Self::References => "textDocument/references",
            Self::Definition => "textDocument/definition",
            Self::Implementation => "textDocument/implementation",
            Self::Hover => "textDocument/hover",
            Self::DocumentSymbols => "textDocument/documentSymbol",
            Self::WorkspaceSymbols => "workspace/symbol",
            Self::CallHierarchy => "textDocument/prepareCallHierarchy",
            Self::Rename => "textDocument/rename",
            Self::CodeActions => "textDocument/codeAction",
        }
    }

    /// The server capability that says the server provides it.
    pub fn capability(self) -> &'static str {
        match self {
            Self::References => "referencesProvider",
            Self::Definition => "definitionProvider",
            Self::Implementation => "implementationProvider",
            Self::Hover => "hoverProvider",
            Self::DocumentSymbols => "documentSymbolProvider",
            Self::WorkspaceSymbols => "workspaceSymbolProvider",
            Self::CallHierarchy => "callHierarchyProvider",
            Self::Rename => "renameProvider",
            Self::CodeActions => "codeActionProvider",
        }
    }

    /// What it is, for messages ("does not provide references").
    pub fn what(self) -> &'static str {
        match self {
            Self::References => "references",
            Self::Definition => "definitions",
            Self::Implementation => "implementations",
            Self::Hover => "hover",
            Self::DocumentSymbols => "document symbols",
            Self::WorkspaceSymbols => "workspace symbols",
            Self::CallHierarchy => "a call hierarchy",
            Self::Rename => "renaming",
            Self::CodeActions => "code actions",
        }
    }
}

/// A position as the model counts: 1-based line, 1-based character in
/// Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CharPosition {
    /// The line, from 1.
    pub line: u32,
    /// The character, from 1.
    pub character: u32,
}

/// Which calls `callHierarchy` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CallDirection {
    /// The functions that call it (`callHierarchy/incomingCalls`).
    Incoming,
    /// The functions it calls (`callHierarchy/outgoingCalls`).
    Outgoing,
}

impl CallDirection {
    /// `"incoming"` or `"outgoing"`, as the answer names its list.
    pub fn name(self) -> &'static str {
        match self {
            Self::Incoming => "incoming",
            Self::Outgoing => "outgoing",
        }
    }
}

/// One question for a language server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LspQuery {
    /// A question about one position of a file: references, definition,
    /// implementation or hover.
    At {
        /// What is asked.
        feature: LspFeature,
        /// The file.
        path: PathBuf,
        /// Where in it.
        at: CharPosition,
    },
    /// The references of the symbol of a file named `symbol` (resolved
    /// through `textDocument/documentSymbol`).
    ReferencesOf {
        /// The file.
        path: PathBuf,
        /// The name, plain (`greet`) or qualified (`Greeter.greet`,
        /// `ns::add`).
        symbol: String,
    },
    /// The symbols of a file.
    DocumentSymbols {
        /// The file.
        path: PathBuf,
    },
    /// The workspace's symbols matching `query`.
    WorkspaceSymbols {
        /// The name, or part of it.
        query: String,
    },
    /// The calls into or out of the function at a position.
    Calls {
        /// The file.
        path: PathBuf,
        /// Where in it.
        at: CharPosition,
        /// Which calls.
        direction: CallDirection,
    },
    /// What renaming the symbol at a position would change (never applied).
    Rename {
        /// The file.
        path: PathBuf,
        /// Where in it.
        at: CharPosition,
        /// The new name.
        new_name: String,
    },
    /// The quick fixes of the diagnostics of a line.
    QuickFixes {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: u32,
    },
}

impl LspQuery {
    /// The feature the server must provide for it (references by name
    /// need document symbols too).
    pub fn feature(&self) -> LspFeature {
        match self {
            Self::At { feature, .. } => *feature,
            Self::ReferencesOf { .. } => LspFeature::References,
            Self::DocumentSymbols { .. } => LspFeature::DocumentSymbols,
            Self::WorkspaceSymbols { .. } => LspFeature::WorkspaceSymbols,
            Self::Calls { .. } => LspFeature::CallHierarchy,
            Self::Rename { .. } => LspFeature::Rename,
            Self::QuickFixes { .. } => LspFeature::CodeActions,
        }
    }

    /// The file asked about (none for workspace symbols).
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Self::At { path, .. }
            | Self::ReferencesOf { path, .. }
            | Self::DocumentSymbols { path }
            | Self::Calls { path, .. }
            | Self::Rename { path, .. }
            | Self::QuickFixes { path, .. } => Some(path),
            Self::WorkspaceSymbols { .. } => None,
        }
    }
}

/// The future [`LanguageServers::ask`] returns: the tool's JSON answer, or
/// a message for the model.
pub type LspFuture = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// The host's running language servers: the editor's, behind the LSP
/// proxy, or those `ide-mcp serve --lsp` runs.
pub trait LanguageServers: Send + Sync {
    /// Asks `query` of the server for its file's language; the answer is
    /// in the model's positions, each location with its line's text.
    /// Dropping the future cancels the request.
    ///
    /// `hidden` are the user's deny rules in force: the text of a file
    /// they hide is never read for the answer (its locations and edits
    /// may still be listed, with no text: the tool leaves them out and
    /// says how many).
    fn ask(&self, query: LspQuery, hidden: Arc<RuleSet>) -> LspFuture;
}
