"""Where an engine keeps the state several server processes must share: `memory` (the in-process
`TaskStore`, the default and the base of every store), `redis` (a store shared through Redis) and
its `lease` (the lock), `factory` (which store a URL names), `url` (a URL as messages show it) and
`eviction` (which tasks a store forgets past its cap). Importing the package imports nothing."""
