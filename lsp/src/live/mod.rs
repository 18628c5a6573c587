//! The live LSP tools' logic, the same for every host: the host's
//! servers, as the tools' [`LanguageServers`](ide_mcp_tools::LanguageServers), through the seam
//! [`ServerHost`] (which server a question goes to, the text it is asked
//! on, the server's wire).
//!
//! A question goes to the server the host routes it to; the server must
//! provide the feature. Positions go from the model's count (1-based,
//! Unicode scalar values) to the server's encoding through the document's
//! text as the server has it (through the LSP proxy, the editor's, unsaved
//! edits included; else the file's), and back for every location, which
//! comes with its line's text. A file the server does not have open is
//! opened on it for the question (text from disk) and closed after; a
//! question of several requests (references by name, call hierarchy,
//! rename, quick fixes) keeps it open until its last answer.
//!
//! [`asking`]: a question, the position questions and document symbols;
//! [`host`]: the seam;
//! [`symbols`]: references by name; [`calls`]: the call hierarchy;
//! [`rename`] and [`fixes`]: edits, shown as diffs by [`edit`]; [`answers`]:
//! positions and answers as the model reads them.

mod answers;
mod asking;
mod calls;
mod edit;
mod fixes;
mod host;
mod rename;
mod symbols;

#[cfg(test)]
pub(crate) use fixes::OWN_COMMAND_PREFIX;

pub(crate) use asking::Live;
pub(crate) use host::{Disk, Document, FileTexts, ServerHost, provider, unsupported};
pub use host::{SERVER_REQUEST_TIMEOUT, ServerFacts, ServerRequestError};
