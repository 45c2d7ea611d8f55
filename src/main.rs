//! The `board` binary: parses the command line and exits with the command's code.

use clap::Parser;

fn main() {
    // The commands agents run on every step skip building clap's command tree.
    let hot = board::cli::hot_path::parse(&std::env::args_os().collect::<Vec<_>>());
    let cli = match hot.map_or_else(board::cli::Cli::try_parse, Ok) {
        Ok(cli) => cli,
        // With --json, a command line that does not parse is still answered with one JSON
        // document on stdout (help and version print as usual).
        Err(e) if e.use_stderr() && arguments().iter().any(|a| a == "--json") => {
            let args = arguments();
            let mut message = non_utf8_argument().unwrap_or_else(|| e.to_string().trim().into());
            if let Some(hint) = board::cli::hints::run_separator(&args) {
                message = format!("{message}\n\nhint: {hint}");
            }
            let err = board::proto::error::BoardError::usage(message);
            println!("{}", err.to_json());
            std::process::exit(board::proto::error::ErrorKind::Usage.exit_code());
        }
        Err(e) if e.use_stderr() => {
            let args = arguments();
            let hint = board::cli::hints::run_separator(&args);
            match non_utf8_argument() {
                Some(m) => eprintln!("error: {m}"),
                None => {
                    let _ = e.print();
                }
            }
            if let Some(hint) = hint {
                eprintln!("\nhint: {hint}");
            }
            std::process::exit(board::proto::error::ErrorKind::Usage.exit_code());
        }
        Err(e) => e.exit(),
    };
    if cli.dies_on_closed_stdout() {
        // `board list | head -1`: end quietly like other Unix tools instead of panicking on EPIPE.
        #[allow(unsafe_code, reason = "signal(2) is unsafe by signature")]
        // SAFETY: restoring the default SIGPIPE disposition before any thread starts; no handler
        // of ours is replaced.
        let _ = unsafe {
            nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGPIPE,
                nix::sys::signal::SigHandler::SigDfl,
            )
        };
    }
    std::process::exit(board::cli::run(cli));
}

/// The command line as text. An argument that is not UTF-8 (which clap has already refused with
/// a usage error) is read lossily here instead of panicking as `std::env::args` would.
fn arguments() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// "argument N (…) is not UTF-8" for the first argument before `--` that is not UTF-8: clap
/// would call it an unknown subcommand or argument, shown with a replacement character.
/// Arguments after `--` (an agent's own command line) may be any bytes.
fn non_utf8_argument() -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let args: Vec<_> = std::env::args_os().collect();
    let (n, bad) = args
        .iter()
        .enumerate()
        .skip(1)
        .take_while(|(_, a)| a.as_os_str() != "--")
        .find(|(_, a)| a.to_str().is_none())?;
    let shown: String = bad
        .as_bytes()
        .iter()
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    Some(format!(
        "argument {n} (\"{shown}\") is not UTF-8: board takes its arguments as UTF-8 text"
    ))
}
