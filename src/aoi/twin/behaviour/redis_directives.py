"""The configuration directives redis-server 6.2 reads from a config file (config.c), for `config_files.redis`.

STANDARD directives take exactly one argument; FREE_ARITY ones are parsed by hand and take several (or a variable
number). Aliases (slave-*) are listed beside their replica-* names, as redis accepts both.
"""

from __future__ import annotations

STANDARD = frozenset("""
rdbchecksum daemonize io-threads-do-reads lua-replicate-commands always-show-logo protected-mode rdbcompression
rdb-del-sync-files activerehashing stop-writes-on-bgsave-error set-proc-title dynamic-hz lazyfree-lazy-eviction
lazyfree-lazy-expire lazyfree-lazy-server-del lazyfree-lazy-user-del lazyfree-lazy-user-flush
repl-disable-tcp-nodelay repl-diskless-sync gopher-enabled aof-rewrite-incremental-fsync no-appendfsync-on-rewrite
cluster-require-full-coverage rdb-save-incremental-fsync aof-load-truncated aof-use-rdb-preamble
cluster-replica-no-failover cluster-slave-no-failover replica-lazy-flush slave-lazy-flush replica-serve-stale-data
slave-serve-stale-data replica-read-only slave-read-only replica-ignore-maxmemory slave-ignore-maxmemory
jemalloc-bg-thread activedefrag syslog-enabled cluster-enabled appendonly cluster-allow-reads-when-down
crash-log-enabled crash-memcheck-enabled use-exit-on-panic disable-thp cluster-allow-replica-migration
replica-announced aclfile unixsocket pidfile replica-announce-ip slave-announce-ip masteruser cluster-announce-ip
syslog-ident dbfilename appendfilename server_cpulist bio_cpulist aof_rewrite_cpulist bgsave_cpulist
ignore-warnings proc-title-template masterauth requirepass supervised syslog-facility repl-diskless-load loglevel
maxmemory-policy appendfsync oom-score-adj acl-pubsub-default sanitize-dump-payload databases port io-threads
auto-aof-rewrite-percentage cluster-replica-validity-factor cluster-slave-validity-factor list-max-ziplist-size
tcp-keepalive cluster-migration-barrier active-defrag-cycle-min active-defrag-cycle-max
active-defrag-threshold-lower active-defrag-threshold-upper lfu-log-factor lfu-decay-time replica-priority
slave-priority repl-diskless-sync-delay maxmemory-samples maxmemory-eviction-tenacity timeout replica-announce-port
slave-announce-port tcp-backlog cluster-announce-bus-port cluster-announce-port cluster-announce-tls-port
repl-timeout repl-ping-replica-period repl-ping-slave-period list-compress-depth rdb-key-save-delay key-load-delay
active-expire-effort hz min-replicas-to-write min-slaves-to-write min-replicas-max-lag min-slaves-max-lag
maxclients maxmemory proto-max-bulk-len client-query-buffer-limit repl-backlog-size hash-max-ziplist-entries
set-max-intset-entries zset-max-ziplist-entries active-defrag-ignore-bytes hash-max-ziplist-value
stream-node-max-bytes zset-max-ziplist-value hll-sparse-max-bytes tracking-table-max-keys repl-backlog-ttl
auto-aof-rewrite-min-size latency-monitor-threshold slowlog-log-slower-than lua-time-limit slowlog-max-len
stream-node-max-entries cluster-node-timeout cluster-config-file tls-port tls-session-cache-size
tls-session-cache-timeout tls-cluster tls-replication tls-auth-clients tls-prefer-server-ciphers tls-session-caching
tls-cert-file tls-key-file tls-key-file-pass tls-client-cert-file tls-client-key-file tls-client-key-file-pass
tls-dh-params-file tls-ca-cert-file tls-ca-cert-dir tls-protocols tls-ciphers tls-ciphersuites
""".split())

FREE_ARITY = frozenset("""
bind unixsocketperm save dir logfile include client-output-buffer-limit oom-score-adj-values notify-keyspace-events
replicaof slaveof rename-command user loadmodule sentinel list-max-ziplist-entries list-max-ziplist-value
""".split())
