#include "observability/hang_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace am::observability {

namespace {

std::string list_text(const std::vector<int>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + std::to_string(v[i]);
  return out;
}

std::string processes_text(const std::vector<int>& v) {
  return (v.size() == 1 ? "process " : "processes ") + list_text(v);
}

/// "12.5 ms" / "1.250 s".
std::string duration_text(std::int64_t us) {
  char buf[64];
  if (us < 1'000'000)
    std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(us) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(us) / 1e6);
  return buf;
}

/// "step 7 (all_gather uint8[16])".
std::string step_text(const flight_entry& e) {
  return "step " + std::to_string(e.step) + " (" + e.signature + ")";
}

/// How a process stands at its last entry of a sequence.
std::string standing_text(const flight_entry& e, std::int64_t dumped_us) {
  switch (e.state) {
    case op_state::issued:
      return "issued it and was waiting for the others to issue it (" + duration_text(dumped_us - e.issued_us)
             + " before its dump)";
    case op_state::checked:
      return "was moving its bytes (checked " + duration_text(dumped_us - e.checked_us) + " before its dump)";
    case op_state::completed: return "completed it";
    case op_state::failed: return "failed in it after " + duration_text(e.ended_us - e.issued_us) + ": " + e.error;
  }
  return "";
}

struct last_of {
  const flight_entry* entry = nullptr;
  std::int64_t dumped_us = 0;
};

} // namespace

std::string explain_hang(const std::vector<flight_dump>& dumps) {
  std::vector<int> have;
  for (auto& d : dumps)
    have.push_back(d.process);
  std::sort(have.begin(), have.end());
  std::string out = std::to_string(dumps.size()) + " flight recorder dump" + (dumps.size() == 1 ? "" : "s") + " ("
                    + processes_text(have) + ")\n";
  for (auto& d : dumps)
    out += "  process " + std::to_string(d.process) + " dumped " + std::to_string(d.entries.size())
           + " entries because: " + d.reason + "\n";

  // Every sequence: each process's last entry, and the union of the participants.
  std::map<std::string, std::map<int, last_of>> last;
  std::map<std::string, std::set<int>> participants;
  for (auto& d : dumps)
    for (auto& e : d.entries) {
      auto& slot = last[e.communicator][d.process];
      if (slot.entry == nullptr || e.step >= slot.entry->step)
        slot = {&e, d.dumped_us};
      participants[e.communicator].insert(e.participants.begin(), e.participants.end());
    }

  std::vector<std::string> quiet;
  bool found = false;
  for (auto& [comm, by_process] : last) {
    std::uint64_t front = 0;
    for (auto& [p, l] : by_process)
      front = std::max(front, l.entry->step);
    // Quiet when every participant that wrote a dump completed the same last step (one that wrote
    // none is named, but nobody waits for it here).
    bool all_done = true;
    std::vector<int> silent;
    for (int p : participants[comm]) {
      if (std::find(have.begin(), have.end(), p) == have.end()) {
        silent.push_back(p);
        continue;
      }
      all_done = all_done && by_process.count(p) && by_process[p].entry->step == front
                 && by_process[p].entry->state == op_state::completed;
    }
    if (all_done) {
      quiet.push_back("'" + comm + "': every process " + (silent.empty() ? "" : "that wrote a dump ")
                      + "completed step " + std::to_string(front)
                      + (silent.empty() ? "" : " (" + processes_text(silent) + " wrote none)"));
      continue;
    }
    found = true;
    out += "\ncommunicator '" + comm + "' (" + processes_text({participants[comm].begin(), participants[comm].end()})
           + "):\n";
    // Who reached the front, grouped by what they issued there (more than one group: a desync).
    std::map<std::string, std::vector<int>> at_front;
    std::vector<int> behind, no_dump;
    for (int p : participants[comm]) {
      auto it = by_process.find(p);
      if (it == by_process.end()) {
        if (std::find(have.begin(), have.end(), p) == have.end())
          no_dump.push_back(p);
        else
          behind.push_back(p);
      } else if (it->second.entry->step == front) {
        at_front[it->second.entry->signature].push_back(p);
      } else {
        behind.push_back(p);
      }
    }
    const flight_entry* front_entry = nullptr;
    for (auto& [p, l] : by_process)
      if (l.entry->step == front && front_entry == nullptr)
        front_entry = l.entry;
    out += "  the furthest step is " + std::to_string(front) + "\n";
    for (auto& [signature, procs] : at_front)
      for (int p : procs) {
        auto& l = by_process[p];
        out += "  process " + std::to_string(p) + " at step " + std::to_string(front) + " (" + signature + ") "
               + standing_text(*l.entry, l.dumped_us) + "\n";
      }
    for (int p : behind) {
      auto it = by_process.find(p);
      if (it == by_process.end())
        out += "  process " + std::to_string(p) + " never issued an operation of this communicator (in its last "
               + "entries)\n";
      else
        out += "  process " + std::to_string(p) + " stopped at " + step_text(*it->second.entry) + ": it "
               + standing_text(*it->second.entry, it->second.dumped_us) + ", and never issued step "
               + std::to_string(front) + "\n";
    }
    for (int p : no_dump)
      out += "  process " + std::to_string(p) + " wrote no dump (it died, was stopped, or did not see a failure)\n";
    if (at_front.size() > 1) {
      out += "  => desync at step " + std::to_string(front) + ":";
      bool first = true;
      for (auto& [signature, procs] : at_front) {
        out += std::string(first ? " " : "; ") + processes_text(procs) + " issued " + signature;
        first = false;
      }
      out += "\n";
    }
    std::vector<int> stuck = behind;
    stuck.insert(stuck.end(), no_dump.begin(), no_dump.end());
    std::sort(stuck.begin(), stuck.end());
    if (!stuck.empty() && front_entry != nullptr) {
      std::vector<int> waiting;
      for (auto& [signature, procs] : at_front)
        waiting.insert(waiting.end(), procs.begin(), procs.end());
      std::sort(waiting.begin(), waiting.end());
      out += "  => " + processes_text(stuck) + (stuck.size() == 1 ? " is" : " are") + " behind: "
             + processes_text(waiting) + (waiting.size() == 1 ? " waits" : " wait") + " for "
             + (stuck.size() == 1 ? "it" : "them") + " at " + step_text(*front_entry) + "\n";
    }
  }
  if (!found)
    out += "\nno communicator was left unfinished: every process completed the same last step of each\n";
  for (auto& q : quiet)
    out += "  " + q + "\n";
  return out;
}

} // namespace am::observability
