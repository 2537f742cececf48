#include "ortkit/serve/scheduler.h"

#include <algorithm>
#include <numeric>

namespace ortkit::serve {

BatchDecision DecideBatch(std::span<const QueueEntry> queue, TimePoint now, const BatchPolicy& policy, bool draining,
                          bool others_busy) {
  BatchDecision decision;
  std::vector<std::size_t> order;
  order.reserve(queue.size());
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (!queue[i].started && queue[i].deadline <= now)
      decision.expired.push_back(i);
    else
      order.push_back(i);
  }
  if (order.empty()) return decision;
  // Split requests keep their place: they are older than anything that arrived since.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (queue[a].priority != queue[b].priority) return queue[a].priority < queue[b].priority;
    return queue[a].enqueued < queue[b].enqueued;
  });
  if (policy.max_batch_size <= 0) {
    decision.run.push_back({order.front(), queue[order.front()].rows_left});
    return decision;
  }

  // Groups of equal shape keys, in the order of their heads.
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i : order) {
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& g) { return queue[g.front()].shape_key == queue[i].shape_key; });
    if (group == groups.end())
      groups.push_back({i});
    else
      group->push_back(i);
  }
  const std::int64_t max_rows = policy.max_batch_size;
  for (const auto& group : groups) {
    std::int64_t rows = 0;
    for (std::size_t i : group) rows += queue[i].rows_left;
    const QueueEntry& head = queue[group.front()];
    const TimePoint due_at = head.enqueued + policy.max_queue_delay;
    const bool full = rows >= max_rows;
    const bool preferred = std::find(policy.preferred_batch_sizes.begin(), policy.preferred_batch_sizes.end(), rows) !=
                           policy.preferred_batch_sizes.end();
    if (full || preferred || draining || !others_busy || head.started || now >= due_at) {
      std::int64_t room = max_rows;
      for (std::size_t i : group) {
        const std::int64_t take = std::min(room, queue[i].rows_left);
        decision.run.push_back({i, take});
        room -= take;
        if (room == 0) break;
      }
      return decision;
    }
    decision.wake_at = std::min(decision.wake_at, due_at);
  }
  for (std::size_t i : order) {
    if (!queue[i].started) decision.wake_at = std::min(decision.wake_at, queue[i].deadline);
  }
  return decision;
}

}  // namespace ortkit::serve
