//! The `board` commands that are exactly one request whose arguments are its method's params:
//! the rows marked `+ Cli` in the method table (`method_table!` in [`crate::proto::methods`]), whose
//! params struct derives `clap::Args` (its field docs are the arguments' help). [`VerbCmd`] is
//! generated from the table, so such a verb needs no code here: its row, its params, its
//! handler and its printer.

use crate::proto::Call;

/// Collects the rows marked `+ Cli` and generates [`VerbCmd`] from them.
macro_rules! cli_verbs {
    (@acc [$( [$(#[$doc:meta])*] $var:ident $name:literal $params:ident; )*]) => {
        /// The commands generated from the method table (see the module docs).
        #[derive(Debug, Clone, clap::Subcommand)]
        pub enum VerbCmd {
            $(
                $(#[$doc])*
                #[command(name = $name)]
                $var(crate::proto::methods::$params),
            )*
        }

        impl VerbCmd {
            /// The request this command sends.
            pub fn call(&self) -> Call {
                match self {
                    $( VerbCmd::$var(p) => Call::$var(p.clone()), )*
                }
            }
        }
    };
    (@acc [$($out:tt)*]
        $(#[$doc:meta])* $var:ident = $name:literal, $access:ident + Cli, $params:ident => $result:ty;
        $($rest:tt)*
    ) => {
        cli_verbs!(@acc [$($out)* [$(#[$doc])*] $var $name $params;] $($rest)*);
    };
    (@acc [$($out:tt)*]
        $(#[$doc:meta])* $var:ident = $name:literal, $access:ident, $params:ident => $result:ty;
        $($rest:tt)*
    ) => {
        cli_verbs!(@acc [$($out)*] $($rest)*);
    };
    ($($rows:tt)*) => {
        cli_verbs!(@acc [] $($rows)*);
    };
}

crate::proto::methods::method_table!(cli_verbs);
