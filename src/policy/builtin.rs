//! The policies shipped inside the binary, from `policies/*.yaml`.

/// (name, YAML), in the order `policy list` shows them.
pub const BUILTIN: &[(&str, &str)] = &[
    ("swimlane", include_str!("../../policies/swimlane.yaml")),
    ("etcd", include_str!("../../policies/etcd.yaml")),
    (
        "openshift-etcd",
        include_str!("../../policies/openshift-etcd.yaml"),
    ),
    (
        "gravity-etcd",
        include_str!("../../policies/gravity-etcd.yaml"),
    ),
    (
        "gitlab-gitaly",
        include_str!("../../policies/gitlab-gitaly.yaml"),
    ),
    ("consul", include_str!("../../policies/consul.yaml")),
    (
        "consul-throughput",
        include_str!("../../policies/consul-throughput.yaml"),
    ),
    (
        "vault-small",
        include_str!("../../policies/vault-small.yaml"),
    ),
    (
        "vault-small-throughput",
        include_str!("../../policies/vault-small-throughput.yaml"),
    ),
    (
        "vault-large",
        include_str!("../../policies/vault-large.yaml"),
    ),
    (
        "vault-large-throughput",
        include_str!("../../policies/vault-large-throughput.yaml"),
    ),
    (
        "splunk-indexer",
        include_str!("../../policies/splunk-indexer.yaml"),
    ),
    (
        "ibm-db2-warehouse-cache",
        include_str!("../../policies/ibm-db2-warehouse-cache.yaml"),
    ),
    (
        "ibm-satellite-host",
        include_str!("../../policies/ibm-satellite-host.yaml"),
    ),
    ("infrahub", include_str!("../../policies/infrahub.yaml")),
    (
        "commvault-index-cache",
        include_str!("../../policies/commvault-index-cache.yaml"),
    ),
    (
        "cockroachdb",
        include_str!("../../policies/cockroachdb.yaml"),
    ),
    (
        "cockroachdb-throughput",
        include_str!("../../policies/cockroachdb-throughput.yaml"),
    ),
    (
        "commvault-disk-library",
        include_str!("../../policies/commvault-disk-library.yaml"),
    ),
    (
        "apigee-cassandra",
        include_str!("../../policies/apigee-cassandra.yaml"),
    ),
    (
        "apigee-postgres",
        include_str!("../../policies/apigee-postgres.yaml"),
    ),
    (
        "atlassian-jira-shared-home",
        include_str!("../../policies/atlassian-jira-shared-home.yaml"),
    ),
    (
        "atlassian-confluence-shared-home",
        include_str!("../../policies/atlassian-confluence-shared-home.yaml"),
    ),
    (
        "atlassian-confluence-local-home",
        include_str!("../../policies/atlassian-confluence-local-home.yaml"),
    ),
    ("confluent", include_str!("../../policies/confluent.yaml")),
    (
        "confluent-throughput",
        include_str!("../../policies/confluent-throughput.yaml"),
    ),
    (
        "ibm-storage-scale-ece-nvme",
        include_str!("../../policies/ibm-storage-scale-ece-nvme.yaml"),
    ),
    (
        "ibm-storage-scale-ece-ssd",
        include_str!("../../policies/ibm-storage-scale-ece-ssd.yaml"),
    ),
    (
        "ibm-storage-scale-ece-hdd",
        include_str!("../../policies/ibm-storage-scale-ece-hdd.yaml"),
    ),
];

pub fn builtin_yaml(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, y)| *y)
}
