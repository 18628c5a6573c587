//! A real Emacs (28+) with eglot, headless (`--fg-daemon`), whose language
//! servers run through `ide-mcp lsp-proxy`; driven with
//! `emacsclient -s SOCKET --eval` (no client library needed).

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lsp::Place;
use super::{Running, bin};

/// How long Emacs may take to open its socket.
const START: Duration = Duration::from_mins(1);

/// The configuration, as a user writes it from the README: one
/// `eglot-server-programs` entry per language through the proxy, and
/// `eglot-ensure` in each mode's hook. The first lines make up for `-q`:
/// Debian's eglot 1.9 is an ELPA package, which Emacs activates at start-up
/// only for a user with an init file; and no native compilation in the
/// background, which would compete with the servers for the cores.
const INIT_EL: &str = r#"
(setq native-comp-deferred-compilation nil)
(package-activate-all)
(require 'eglot nil t)
(with-eval-after-load 'eglot
  (let ((bin (getenv "IDE_MCP_BIN"))
        (linger (getenv "IDE_MCP_LINGER"))
        (log (getenv "IDE_MCP_LOG")))
    (add-to-list 'eglot-server-programs
                 `((c-mode c-ts-mode) . (,bin "lsp-proxy" "--linger" ,linger "--log" ,log
                                              "--" "clangd")))
    (add-to-list 'eglot-server-programs
                 `((python-mode python-ts-mode) . (,bin "lsp-proxy" "--linger" ,linger "--log" ,log
                                                        "--" "pyright-langserver" "--stdio")))))
(add-hook 'c-mode-hook #'eglot-ensure)
(add-hook 'python-mode-hook #'eglot-ensure)
;; A `window/showMessageRequest` (the review's prompt), which eglot asks
;; with `completing-read`: a daemon has no frame to ask in. Answered
;; "Review" and recorded, as the user would answer it.
(defvar ide-mcp-prompts nil)
;; eglot asks before applying an edit a server sends (a reload of a file
;; Claude wrote: `eglot-confirm-server-initiated-edits`), with `y-or-n-p',
;; and visiting the file then asks whether to reread it from disk, with
;; `yes-or-no-p': both answered yes and recorded, as the user would.
(defvar ide-mcp-confirmations nil)
(defun ide-mcp-confirm (ask prompt)
  (if (string-match-p "Server wants to edit\\|changed on disk" prompt)
      (progn (setq ide-mcp-confirmations (append ide-mcp-confirmations (list prompt))) t)
    (funcall ask prompt)))
(advice-add 'y-or-n-p :around #'ide-mcp-confirm)
(advice-add 'yes-or-no-p :around #'ide-mcp-confirm)
(with-eval-after-load 'eglot
  (cl-defmethod eglot-handle-request :around
    (_server (_method (eql 'window/showMessageRequest)) &key message &allow-other-keys)
    (setq ide-mcp-prompts (append ide-mcp-prompts (list message)))
    (let ((completing-read-function (lambda (&rest _) "Review")))
      (cl-call-next-method))))
"#;

/// Whether Emacs has eglot (built in since 29, an ELPA package before);
/// when it has not, the rule of [`super::installed`].
pub(crate) fn eglot_installed() -> bool {
    let output = Command::new("emacs")
        .args(["-q", "--no-site-file", "--batch", "--eval"])
        .arg("(progn (package-activate-all) (princ (featurep (require 'eglot nil t))))")
        .output()
        .unwrap();
    super::present("eglot", output.stdout == b"t")
}

/// A running Emacs daemon.
pub(crate) struct Emacs {
    pub(crate) running: Running,
    socket: PathBuf,
    /// The proxies' (and their host's) `--log` file.
    pub(crate) log: PathBuf,
}

/// `text` as an Emacs Lisp string literal: a JSON string is one (the
/// escapes `\"`, `\\`, `\n`, `\t`, `\uXXXX` mean the same in both).
pub(crate) fn lisp_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// The form whose value is the buffer visiting `path`.
fn buffer_of(path: &Path) -> String {
    format!("(get-file-buffer {})", lisp_string(path.to_str().unwrap()))
}

/// The form whose value is the eglot server of the buffer visiting `path`.
fn managing(path: &Path) -> String {
    format!(
        "(with-current-buffer {} (eglot-current-server))",
        buffer_of(path)
    )
}

impl Emacs {
    /// Starts Emacs in `workspace` with `place`'s directories; the hosts
    /// its proxies start linger `linger` seconds; `name` names the
    /// directory of `place` that holds its init file, socket, proxy log
    /// and `HOME` (so nothing of the user's `~/.emacs.d` is read or
    /// written).
    pub(crate) fn start(place: &Place, workspace: &Path, name: &str, linger: u64) -> Self {
        let scratch = place.dir.path().join(name);
        std::fs::create_dir_all(&scratch).unwrap();
        // Emacs refuses a server socket in a directory others can read.
        std::fs::set_permissions(&scratch, std::fs::Permissions::from_mode(0o700)).unwrap();
        let init = scratch.join("init.el");
        std::fs::write(&init, INIT_EL).unwrap();
        let socket = scratch.join("emacs.sock");
        let log = scratch.join("proxy.log");
        let mut command = Command::new("emacs");
        command
            .args(["-q", "--no-site-file"])
            .arg(format!("--fg-daemon={}", socket.display()))
            .arg("-l")
            .arg(&init)
            .env("HOME", &scratch)
            .env("IDE_MCP_BIN", bin())
            .env("IDE_MCP_LINGER", linger.to_string())
            .env("IDE_MCP_LOG", &log)
            .current_dir(workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        place.environment(&mut command);
        let mut running = Running::spawn(command);
        // The daemon opens its socket once the init file has run.
        running.wait_for_socket(&socket, START, "Emacs");
        let emacs = Self {
            running,
            socket,
            log,
        };
        assert_eq!(emacs.eval("(featurep 'eglot)"), "t", "eglot did not load");
        emacs
    }

    /// The value of `elisp`, as Emacs prints it (`t`, `nil`, `"text"`...).
    ///
    /// # Panics
    ///
    /// When `emacsclient` fails (an error in `elisp` among others).
    pub(crate) fn eval(&self, elisp: &str) -> String {
        let output = self.client(elisp).output().unwrap();
        assert!(
            output.status.success(),
            "{elisp}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// The value of `elisp` (vectors, strings, numbers, `t`), as JSON.
    pub(crate) fn value(&self, elisp: &str) -> Value {
        let printed = self.eval(&format!("(progn (require 'json) (json-encode {elisp}))"));
        // A printed string escapes only `"` and `\`: a JSON string too.
        let json: String = serde_json::from_str(&printed)
            .unwrap_or_else(|error| panic!("{elisp}: {printed}: {error}"));
        serde_json::from_str(&json).unwrap_or_else(|error| panic!("{elisp}: {json}: {error}"))
    }

    fn client(&self, elisp: &str) -> Command {
        let mut command = Command::new("emacsclient");
        command.arg("-s").arg(&self.socket).arg("--eval").arg(elisp);
        command
    }

    /// Visits `path` and waits (at most `limit`) until eglot manages it.
    pub(crate) fn open(&self, path: &Path, limit: Duration) {
        // `eglot-ensure` (in the mode's hook) connects from
        // `post-command-hook`, which an `--eval` does not run, not being a
        // command: run it, as the end of a `C-x C-f` would.
        self.eval(&format!(
            "(progn (find-file {}) (run-hooks 'post-command-hook) t)",
            lisp_string(path.to_str().unwrap())
        ));
        self.wait(&managing(path), limit);
    }

    /// Whether eglot manages the buffer visiting `path`.
    pub(crate) fn managed(&self, path: &Path) -> bool {
        self.eval(&format!("(and {} t)", managing(path))) == "t"
    }

    /// The text of the buffer visiting `path`.
    pub(crate) fn text(&self, path: &Path) -> String {
        self.value(&format!(
            "(with-current-buffer {} (buffer-substring-no-properties (point-min) (point-max)))",
            buffer_of(path)
        ))
        .as_str()
        .unwrap()
        .to_owned()
    }

    /// The questions eglot asked before applying a server's edit.
    pub(crate) fn confirmations(&self) -> Vec<String> {
        let asked = self.value("(vconcat ide-mcp-confirmations)");
        asked
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q.as_str().unwrap().to_owned())
            .collect()
    }

    /// Sets the whole text of the buffer visiting `path`, without saving.
    pub(crate) fn set_text(&self, path: &Path, text: &str) {
        self.eval(&format!(
            "(with-current-buffer {} (erase-buffer) (insert {}) t)",
            buffer_of(path),
            lisp_string(text)
        ));
    }

    /// Saves the buffer visiting `path` (`C-x C-s`).
    pub(crate) fn save(&self, path: &Path) {
        let modified = self.eval(&format!(
            "(with-current-buffer {} (save-buffer) (buffer-modified-p))",
            buffer_of(path)
        ));
        assert_eq!(modified, "nil");
    }

    /// Shows the buffer visiting `path` and selects `length` characters
    /// from `line`, `column` (0-based), as `C-SPC` and a motion do;
    /// returns the region's text.
    pub(crate) fn select(&self, path: &Path, line: u32, column: u32, length: u32) -> String {
        let text = self.value(&format!(
            "(progn (switch-to-buffer {}) \
             (goto-char (point-min)) (forward-line {line}) (forward-char {column}) \
             (push-mark (point) t t) (forward-char {length}) \
             (buffer-substring-no-properties (region-beginning) (region-end)))",
            buffer_of(path)
        ));
        serde_json::from_value(text).unwrap()
    }

    /// The titles of the code actions eglot gets for the region of the
    /// buffer visiting `path` (`eglot-code-actions` called from Lisp
    /// returns them).
    pub(crate) fn code_actions(&self, path: &Path) -> Vec<String> {
        let titles = self.value(&format!(
            "(with-current-buffer {} \
             (vconcat (mapcar (lambda (action) (plist-get action :title)) \
             (eglot-code-actions (region-beginning) (region-end)))))",
            buffer_of(path)
        ));
        serde_json::from_value(titles).unwrap()
    }

    /// `M-x eglot-code-actions` on the region of the buffer visiting
    /// `path`, answering its menu with `title` (`RET` on the completion);
    /// returns the prompt and the menu's items.
    pub(crate) fn pick_code_action(&self, path: &Path, title: &str) -> (String, Vec<String>) {
        // eglot pops up a mouse menu when the last event was a click (a
        // list), else asks with `completing-read`: the last event is `RET`.
        let menu = self.value(&format!(
            "(with-current-buffer {buffer} (let* ((menu nil) \
                    (completing-read-function \
                     (lambda (prompt items &rest _) \
                       (setq menu (vector prompt (vconcat (all-completions \"\" items)))) \
                       {title})) \
                    (last-nonmenu-event ?\\r)) \
               (call-interactively #'eglot-code-actions) \
               menu))",
            buffer = buffer_of(path),
            title = lisp_string(title)
        ));
        serde_json::from_value(menu).unwrap()
    }

    /// The messages of eglot's (flymake's) diagnostics of the buffer
    /// visiting `path`: what the user sees.
    pub(crate) fn diagnostics(&self, path: &Path) -> Vec<String> {
        let texts = self.value(&format!(
            "(with-current-buffer {} \
             (vconcat (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))",
            buffer_of(path)
        ));
        serde_json::from_value(texts).unwrap()
    }

    /// flymake's diagnostics of the buffer visiting `path`: for each, its
    /// first line (0-based), its text as the user sees it, and the LSP
    /// diagnostic eglot made it of (`null` for another backend's).
    pub(crate) fn flymake(&self, path: &Path) -> Vec<(u32, String, Value)> {
        let shown = self.value(&format!(
            "(with-current-buffer {} \
             (vconcat (mapcar (lambda (d) (vector \
               (1- (line-number-at-pos (flymake-diagnostic-beg d))) \
               (flymake-diagnostic-text d) \
               (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d))))) \
             (flymake-diagnostics))))",
            buffer_of(path)
        ));
        serde_json::from_value(shown).unwrap()
    }

    /// Whether the client capabilities eglot sends the server of the
    /// buffer visiting `path` hold `keys` (`[":window", ":showMessage"]`).
    pub(crate) fn advertises(&self, path: &Path, keys: &[&str]) -> bool {
        let form = keys.iter().fold(
            format!("(eglot-client-capabilities {})", managing(path)),
            |inner, key| format!("(plist-get {inner} {key})"),
        );
        self.eval(&format!("(and {form} t)")) == "t"
    }

    /// The prompts of the `window/showMessageRequest`s eglot got, oldest
    /// first (the init file answers them "Review").
    pub(crate) fn prompts(&self) -> Vec<String> {
        serde_json::from_value(self.value("(vconcat ide-mcp-prompts)")).unwrap()
    }

    /// Replaces line `line` (0-based) of the buffer visiting `path` with
    /// `text`, without saving, as typing over it does.
    pub(crate) fn replace_line(&self, path: &Path, line: u32, text: &str) {
        self.eval(&format!(
            "(with-current-buffer {} (goto-char (point-min)) (forward-line {line}) \
             (delete-region (point) (line-end-position)) (insert {}) t)",
            buffer_of(path),
            lisp_string(text)
        ));
    }

    /// `M-x eglot-shutdown-all`: each server is sent `shutdown` and
    /// `exit`, then its process group killed.
    pub(crate) fn shutdown_all(&self) {
        assert_eq!(self.eval("(progn (eglot-shutdown-all) t)"), "t");
    }

    /// `(kill-emacs)`, and waits (at most `limit`) for Emacs to exit: the
    /// connection may close before it answers.
    pub(crate) fn kill_emacs(mut self, limit: Duration) {
        let _ = self.client("(kill-emacs)").output();
        self.running.wait_timeout(limit);
    }

    /// SIGKILL, and waits for the exit.
    pub(crate) fn kill(mut self) {
        self.running.child.kill().unwrap();
        self.running.child.wait().unwrap();
    }

    /// Waits until `elisp` is non-nil.
    pub(crate) fn wait(&self, elisp: &str, limit: Duration) {
        let start = Instant::now();
        while self.eval(&format!("(and {elisp} t)")) != "t" {
            assert!(
                start.elapsed() < limit,
                "Emacs: never {elisp}; messages: {}; proxy log: {}; stderr: {}",
                self.value("(with-current-buffer (messages-buffer) (buffer-string))"),
                std::fs::read_to_string(&self.log).unwrap_or_default(),
                self.running.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
