//! Git for the demo's ending: the repository in the demo directory, the agents' worktrees, and
//! an environment that keeps the user's own git configuration (signing, hooks paths, identity)
//! out of the throwaway repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::proto::error::{BoardError, BoardResult};

/// Sets the environment every git of the demo runs with: no global or system configuration,
/// and `name` as author and committer.
pub fn git_env<'a>(cmd: &'a mut Command, name: &str) -> &'a mut Command {
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", name)
        .env("GIT_AUTHOR_EMAIL", format!("{name}@demo.invalid"))
        .env("GIT_COMMITTER_NAME", name)
        .env("GIT_COMMITTER_EMAIL", format!("{name}@demo.invalid"))
}

/// Why the ending cannot run here (`git` cannot be run), or None.
pub fn git_missing() -> Option<String> {
    match Command::new("git")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => None,
        Ok(s) => Some(format!("`git --version` exited {s}")),
        Err(e) => Some(format!("git cannot be run: {e}")),
    }
}

/// `git ARGS` in `dir`; its trimmed stdout. Errors: `internal`, naming the command and git's
/// message.
pub fn git(dir: &Path, args: &[&str]) -> BoardResult<String> {
    let out = git_env(Command::new("git").arg("-C").arg(dir).args(args), "demo")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| BoardError::internal(format!("running git {}: {e}", args.join(" "))))?;
    if !out.status.success() {
        return Err(BoardError::internal(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether commit `a` is an ancestor of (or is) `of`, in the repository at `dir`.
pub fn is_ancestor(dir: &Path, a: &str, of: &str) -> bool {
    git(dir, &["merge-base", "--is-ancestor", a, of]).is_ok()
}

/// The demo directory as a git repository.
pub struct Repo {
    root: PathBuf,
}

impl Repo {
    /// Makes `root` a repository on `main` with one commit (board.toml and the board's data
    /// stay untracked: the demo rewrites board.toml), and installs the commit fence hooks with
    /// `board init --git-hooks`.
    pub fn init(root: &Path, exe: &Path) -> BoardResult<Repo> {
        git(root, &["init", "-q", "-b", "main"])?;
        super::files::write(&root.join(".gitignore"), ".board/\nboard.toml\n")?;
        super::files::write(
            &root.join("README.md"),
            "# link shortener\n\nShort links, their redirects and their hit counts.\n",
        )?;
        git(root, &["add", ".gitignore", "README.md"])?;
        git(root, &["commit", "-q", "-m", "Start the link shortener"])?;
        let mut cmd = Command::new(exe);
        cmd.args(["init", "--git-hooks"])
            .current_dir(root)
            .stdin(Stdio::null());
        let out = crate::proto::client::without_identity(git_env(&mut cmd, "demo"))
            .output()
            .map_err(|e| BoardError::internal(format!("running board init --git-hooks: {e}")))?;
        if !out.status.success() {
            return Err(BoardError::internal(format!(
                "board init --git-hooks failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(Repo {
            root: root.to_path_buf(),
        })
    }

    /// A worktree for agent `name` at `.board/worktrees/NAME` on a new branch `board/NAME`
    /// made from `from`, as `worktree = true` gives an agent; its path.
    pub fn worktree(&self, name: &str, from: &str) -> BoardResult<PathBuf> {
        let path = self.root.join(".board").join("worktrees").join(name);
        let branch = format!("board/{name}");
        let p = path.to_string_lossy().into_owned();
        git(
            &self.root,
            &["worktree", "add", "-q", "-b", &branch, &p, from],
        )?;
        Ok(path)
    }
}
