//! The `board` binary: parses the command line and exits with the command's code.

use clap::Parser;

fn main() {
    let cli = board::cli::Cli::parse();
    if cli.dies_on_closed_stdout() {
        // `board list | head -1`: end quietly like other Unix tools instead of panicking on EPIPE.
        let _ = unsafe {
            nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGPIPE,
                nix::sys::signal::SigHandler::SigDfl,
            )
        };
    }
    std::process::exit(board::cli::run(cli));
}
