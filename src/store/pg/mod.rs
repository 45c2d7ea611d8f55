//! The PostgreSQL backend: a store several hosts' boards share.

#[cfg(test)]
pub(crate) mod cluster;

#[cfg(test)]
mod tests {
    use super::cluster::{skip_reason, Cluster};

    #[test]
    fn a_private_cluster_answers_on_its_own_socket_and_is_removed_on_drop() {
        if let Some(why) = skip_reason() {
            eprintln!("skipped: {why}");
            return;
        }
        let cluster = Cluster::start().unwrap();
        let mut client = postgres::Client::connect(&cluster.url(), postgres::NoTls).unwrap();
        let row = client
            .query_one(
                "SELECT current_setting('server_version_num')::int, \
                 current_setting('listen_addresses'), current_user::text",
                &[],
            )
            .unwrap();
        let version: i32 = row.get(0);
        let listen: String = row.get(1);
        let user: String = row.get(2);
        assert!(version >= 130_000, "server version {version}");
        assert_eq!(listen, "", "no TCP listener");
        assert_eq!(user, "board");
        let pid = cluster.pid().unwrap();
        cluster.restart().unwrap();
        assert_ne!(cluster.pid(), Some(pid), "restarted: a new postmaster");
        assert!(
            client.simple_query("SELECT 1").is_err(),
            "the old session is gone"
        );
        let mut client = postgres::Client::connect(&cluster.url(), postgres::NoTls).unwrap();
        client.simple_query("SELECT 1").unwrap();
        let dir = cluster.dir().to_path_buf();
        drop(client);
        drop(cluster);
        assert!(!dir.exists(), "the cluster's directory is removed");
    }
}
