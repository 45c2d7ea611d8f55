//! The `board` binary: parses the command line and exits with the command's code.

use clap::Parser;

fn main() {
    let cli = board::cli::Cli::parse();
    std::process::exit(board::cli::run(cli));
}
