"""How a call's changes reach the shared store: one Lua script that checks what the call assumed
and writes only the keys it touches, or refuses and writes nothing.

Redis runs a script atomically (no other command runs while it does), so a script that checks and
then writes is a compare-and-set. Before any write, the script checks that

- the reset generation is the one the call computed with (else RESET: a reset came between),
  and so is the clock's advance (else CHANGED: another process advanced the clock);
- each task the call writes still has the version it read (`VERSIONED`, else CHANGED), and so
  does each task it read without writing it, and the polls count of a task waiting for polls
  (`CHECKED`, else CHANGED); and each name a new task takes is still free (`FREE`, else
  CHANGED: another process made a task of that name since);
- each use the call spends of an interaction with `times` stays within it (`SPEND`, else USED_UP);
- in `cas` mode, the counters (ids minted, the clock's offset, tasks made) are where the call
  found them. Then it moves them to where the call left them. Otherwise it reserves as much as
  the call used, from where they are now, and answers with those bases (MOVED), writing nothing
  else: the process computes the call again from the bases and writes in `reserved` mode, which
  leaves the counters alone. So a call never waits on the counters: two calls that race for them
  get different ranges, and one that is refused later leaves a gap, never a duplicate.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from mockagent.engine.store.client import Client, Command, Script

NUMBERED = "NUMBERED"
"""A pseudo-command: `(NUMBERED, list, counter, bytes, size, budget, *entries)` appends each
entry to `list` as "<n> <entry>", with n taken from `counter` (INCRBY), then drops the oldest
while the list is longer than `size` or, but for the newest, its bytes (kept in `bytes`) are past
`budget`: the last calls, bounded, numbered in one step on the server."""
VERSIONED = "VERSIONED"
"""A pseudo-command: `(VERSIONED, hash, versions, *(field, version, value))` sets each field of
`hash` to its value and adds one to its version in `versions`, if every version is still the one
given (none: 0); otherwise nothing is written."""
CHECKED = "CHECKED"
"""A pseudo-command: `(CHECKED, hash, *(field, value))` writes nothing, and refuses the whole
write unless each field of `hash` still holds its value (none: 0)."""
FREE = "FREE"
"""A pseudo-command: `(FREE, hash, *fields)` writes nothing, and refuses the whole write if any
field of `hash` exists."""
CAPPED = "CAPPED"
"""A pseudo-command: `(CAPPED, tasks, versions, polls, names, order, finished, cap, gone,
remembered)` evicts tasks while `tasks` holds more than `cap`: the one that finished longest ago
first (`finished` lists them in the order they did), else the oldest (`order`, a sorted set by
creation number), with its version, polls and name. `gone` (a hash) keeps the state of the last
`remembered` evicted tasks by id, in the order they went (`gone:order`), and their count
(`gone:count`), so that a call naming one is told why it is not found."""
SPEND = "SPEND"
"""A pseudo-command: `(SPEND, hash, *(field, n, limit))` adds n to each count in `hash` if none
goes past its limit; otherwise nothing is written."""
WRITTEN, CHANGED, USED_UP, RESET, MOVED = 1, -1, -2, -3, -4
"""What the script answers: written, or why it wrote nothing."""

# KEYS[1]: head. ARGV[1]: a JSON array (one argument: redis-py encodes each argument on its own,
# which cost more than the JSON) of the mode (cas, reserved), the generation, the counters as the
# call found and left them (ids, ids', offset, offset', made, made'), how far the call advanced
# the clock (ms), the writes (an array of commands), and how far the call found the clock
# advanced. {WRITTEN}, {MOVED, ids, offset, made}, or {CHANGED and the like}.
# A task this call made (version 0) is checked only once the counters are: its id comes from
# them, so a race for them is MOVED (reserve and compute again), not CHANGED (read again).
_COMMIT = """
local head = KEYS[1]
local a = cjson.decode(ARGV[1])
local writes = a[10]
if tonumber(redis.call('HGET', head, 'generation')) ~= a[2] then return {-3} end
local advanced = tonumber(redis.call('HGET', head, 'advanced')) or 0
if math.abs(advanced - a[11]) > 1e-6 then return {-1} end
local function versions(w, new)  -- false when a task's version is not the one read
  for j = 4, #w, 3 do
    if (w[j + 1] == 0) == new then
      if (tonumber(redis.call('HGET', w[3], w[j])) or 0) ~= w[j + 1] then return false end
    end
  end
  return true
end
for _, w in ipairs(writes) do  -- every check before any write
  if w[1] == 'VERSIONED' then
    if not versions(w, false) then return {-1} end
  elseif w[1] == 'CHECKED' then
    for j = 3, #w, 2 do
      if (tonumber(redis.call('HGET', w[2], w[j])) or 0) ~= w[j + 1] then return {-1} end
    end
  elseif w[1] == 'SPEND' then
    for j = 3, #w, 3 do
      if (tonumber(redis.call('HGET', w[2], w[j])) or 0) + w[j + 1] > w[j + 2] then
        return {-2}
      end
    end
  elseif w[1] == 'FREE' then
    for j = 3, #w do
      if redis.call('HEXISTS', w[2], w[j]) == 1 then return {-1} end
    end
  end
end
local function text(x) return string.format('%.17g', x) end
if a[1] == 'cas' then
  local now = redis.call('HMGET', head, 'ids', 'offset', 'made')
  local ids, offset, made = tonumber(now[1]), tonumber(now[2]), tonumber(now[3] or '0')
  if ids ~= a[3] or offset ~= a[5] or made ~= a[7] then
    redis.call('HSET', head, 'ids', text(ids + a[4] - a[3]),
      'offset', text(offset + (a[6] - a[5])), 'made', text(made + a[8] - a[7]))
    return {-4, now[1], now[2], text(made)}
  end
  redis.call('HSET', head, 'ids', text(a[4]), 'offset', text(a[6]), 'made', text(a[8]))
end
for _, w in ipairs(writes) do
  if w[1] == 'VERSIONED' and not versions(w, true) then return {-1} end
end
if a[9] ~= 0 then redis.call('HINCRBYFLOAT', head, 'advanced', text(a[9])) end
for _, w in ipairs(writes) do
  if w[1] == 'NUMBERED' then
    local list, bytes, size, budget = w[2], w[4], w[5], w[6]
    local count = #w - 6
    local last = redis.call('INCRBY', w[3], count) - count
    local total = tonumber(redis.call('GET', bytes) or '0')
    for j = 1, count do
      local entry = (last + j) .. ' ' .. w[6 + j]
      redis.call('RPUSH', list, entry)
      total = total + #entry
    end
    local length = redis.call('LLEN', list)
    while length > size or (total > budget and length > 1) do
      total = total - #redis.call('LPOP', list)
      length = length - 1
    end
    redis.call('SET', bytes, total)
  elseif w[1] == 'VERSIONED' then
    for j = 4, #w, 3 do
      redis.call('HSET', w[2], w[j], w[j + 2])
      redis.call('HINCRBY', w[3], w[j], 1)
    end
  elseif w[1] == 'SPEND' then
    for j = 3, #w, 3 do redis.call('HINCRBY', w[2], w[j], w[j + 1]) end
  elseif w[1] == 'CAPPED' then
    local tasks, order, finished = w[2], w[6], w[7]
    while redis.call('HLEN', tasks) > w[8] do
      local gone = redis.call('LPOP', finished) or redis.call('ZRANGE', order, 0, 0)[1]
      if not gone then break end
      local stored = redis.call('HGET', tasks, gone)
      if stored then
        local task = cjson.decode(stored)
        if type(task.name) == 'string' then redis.call('HDEL', w[5], task.name) end
        for k = 2, 4 do redis.call('HDEL', w[k], gone) end
        redis.call('HSET', w[9], gone, tostring(task.state))
        redis.call('RPUSH', w[9] .. ':order', gone)
        redis.call('INCR', w[9] .. ':count')
        if redis.call('LLEN', w[9] .. ':order') > w[10] then
          redis.call('HDEL', w[9], redis.call('LPOP', w[9] .. ':order'))
        end
      end
      redis.call('ZREM', order, gone)
    end
  elseif w[1] ~= 'CHECKED' and w[1] ~= 'FREE' then
    redis.call(unpack(w))
  end
end
return {1}
"""
SCRIPT = Script(_COMMIT)

Counts = tuple[int, float, int]
"""The counters a call consumes: ids minted, the clock's offset (ms), tasks made."""


def write(
    client: Client,
    head: str,
    generation: int,
    found: Counts,
    left: Counts | None,
    advanced_ms: float,
    writes: Sequence[Command],
    found_advanced_ms: float = 0.0,
) -> tuple[int, Counts | None]:
    """Run the script: `left` None for `reserved` mode (the counters were reserved already);
    `found_advanced_ms`: the clock's advance the call computed with (another process may have
    advanced it since). (WRITTEN, None), (MOVED, the bases reserved), or (why nothing was
    written, None)."""
    mode = "reserved" if left is None else "cas"
    moved = found if left is None else left
    counters = [found[0], moved[0], found[1], moved[1], found[2], moved[2]]
    args = [json.dumps([mode, generation, *counters, advanced_ms, writes, found_advanced_ms])]
    (answer, *bases) = client.run(SCRIPT, [head], args)[0]
    if answer == MOVED:
        return MOVED, (int(bases[0]), float(bases[1]), int(bases[2]))
    return int(answer), None
