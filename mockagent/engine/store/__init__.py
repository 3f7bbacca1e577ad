"""Where an engine keeps the state several server processes must share: `memory` (the in-process
`TaskStore`, the default and the base of every store), `transactions` (a call computed and
written, again when a shared store refuses it, and calls written as a group), `redis` (a store
shared through Redis, without a lock) with its `client` (redis-py), `commit` (the write script, a
compare-and-set), `redis_head` (the counters), `redis_tasks` (tasks and this process's copies of
them), `redis_records` (use counts and the journal) and `redis_changes` (pub/sub notes that wake
streams); `factory` (which store a URL names), `url` (a URL as messages show it) and `eviction`
(which tasks a store forgets past its cap). Importing the package imports nothing."""
