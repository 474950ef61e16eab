#include "devices/collectives/fingerprint_dissemination.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>
#include <cstring>

namespace am::detail {

namespace {

using clock = shm_mesh::clock;

/// How long a participant whose time ran out waits for the answers to its probe.
constexpr std::chrono::milliseconds probe_window{250};

/// The longest verdict text a message carries.
constexpr std::size_t verdict_room = 4000;

// A tag: kind (4 bits) | round (6) | lane (2) | step (36) | sender's rank (16). Kinds 4 to 7 are a
// send/recv's messages (point_to_point_message); kind 8 the phases of a collective that reads its
// peers' memory (mesh_collective_tag).
enum class kind : std::uint64_t { round = 1, control = 2, payload = 3, read_phase = 8 };
enum class control : std::uint8_t { probe = 1, present = 2, verdict = 3 };

constexpr std::uint64_t sender_bits = 0xffff;
constexpr std::uint64_t step_bits = (std::uint64_t{1} << 36) - 1;

std::uint64_t tag_of(kind k, unsigned round, std::uint8_t lane, std::uint64_t step, int sender) {
  return static_cast<std::uint64_t>(k) << 60 | static_cast<std::uint64_t>(round & 0x3f) << 54
         | static_cast<std::uint64_t>(lane & 0x3) << 52 | (step & step_bits) << 16
         | (static_cast<std::uint64_t>(sender) & sender_bits);
}

int sender_of(std::uint64_t tag) {
  return static_cast<int>(tag & sender_bits);
}

/// A round's message: a count and the payload bytes that follow in a message of their own (0:
/// none), then (position in the group, payload length, record) entries.
constexpr std::size_t header_bytes = 8;
constexpr std::size_t entry_bytes = 8 + fingerprint_bytes;

std::size_t round_capacity(std::size_t entries) {
  return header_bytes + entries * entry_bytes;
}

void put_u32(std::byte* at, std::uint32_t v) {
  std::memcpy(at, &v, 4);
}

std::uint32_t get_u32(const std::byte* at) {
  std::uint32_t v;
  std::memcpy(&v, at, 4);
  return v;
}

std::vector<std::byte> control_message(control c, const std::string& text = {}) {
  std::vector<std::byte> out(1 + std::min(text.size(), verdict_room));
  out[0] = static_cast<std::byte>(c);
  std::memcpy(out.data() + 1, text.data(), out.size() - 1);
  return out;
}

/// One check in progress.
class check {
public:
  check(shm_mesh& mesh, const std::vector<int>& group, std::uint8_t lane, std::uint64_t step,
        const fingerprint_record& mine, clock::time_point deadline, const std::function<void()>& idle,
        std::chrono::milliseconds idle_every, dissemination_payload payload)
      : mesh_(mesh), group_(group), lane_(lane), step_(step), deadline_(deadline), idle_(idle),
        idle_every_(idle_every), known_(group.size(), false), present_(group.size(), false),
        expected_(std::move(payload.expected)) {
    position_ = static_cast<std::size_t>(std::find(group.begin(), group.end(), mesh.rank()) - group.begin());
    out_.records.assign(group.size() * fingerprint_bytes, std::byte{0});
    std::memcpy(out_.records.data() + position_ * fingerprint_bytes, mine.data(), fingerprint_bytes);
    known_[position_] = true;
    expected_.resize(group.size(), 0);
    out_.payloads.resize(group.size());
    out_.payloads[position_] = std::move(payload.mine);
  }

  dissemination_outcome run() {
    post_control();
    const std::size_t n = group_.size();
    for (unsigned round = 0; (std::size_t{1} << round) < n; ++round) {
      const std::size_t distance = std::size_t{1} << round;
      const int to = group_[(position_ + distance) % n];
      const int from = group_[(position_ + n - distance % n) % n];
      const std::size_t entries = std::min(distance, n);
      auto incoming = mesh_.receive(tag_of(kind::round, round, lane_, step_, from), ~std::uint64_t{0},
                                    round_capacity(entries));
      send_round(to, round, entries);
      if (!await(incoming))
        return finish(incoming);
      if (incoming->failed) {
        out_.error = std::make_exception_ptr(runtime_error("the fingerprint from rank " + std::to_string(from)
                                                           + " did not arrive over shared memory: " + incoming->error));
        return finish(nullptr);
      }
      std::shared_ptr<shm_mesh::transfer> payloads;
      if (incoming->length >= header_bytes && get_u32(incoming->bytes.data() + 4) != 0) {
        payloads = mesh_.receive(tag_of(kind::payload, round, lane_, step_, from), ~std::uint64_t{0},
                                 expected_payload_bytes(*incoming));
        if (!await(payloads))
          return finish(payloads);
      }
      take(*incoming, payloads.get());
    }
    drain_control(); // a verdict already here outweighs the records: its sender gave up on this step
    return finish(nullptr);
  }

private:
  void post_control() {
    control_ = mesh_.receive(tag_of(kind::control, 0, lane_, step_, 0), ~sender_bits, 1 + verdict_room);
  }

  /// Sends round `round`'s records (the `entries` positions this rank knows, itself first) to
  /// `to`, and their payloads after them in a message of their own.
  void send_round(int to, unsigned round, std::size_t entries) {
    std::vector<std::byte> records(round_capacity(entries));
    std::vector<std::byte> payloads;
    const std::size_t n = group_.size();
    put_u32(records.data(), static_cast<std::uint32_t>(entries));
    for (std::size_t j = 0; j < entries; ++j) {
      const std::size_t q = (position_ + n - j) % n; // known after the rounds before this one
      std::byte* entry = records.data() + header_bytes + j * entry_bytes;
      const auto& payload = out_.payloads[q];
      put_u32(entry, static_cast<std::uint32_t>(q));
      put_u32(entry + 4, static_cast<std::uint32_t>(payload.size()));
      std::memcpy(entry + 8, out_.records.data() + q * fingerprint_bytes, fingerprint_bytes);
      payloads.insert(payloads.end(), payload.begin(), payload.end());
    }
    put_u32(records.data() + 4, payloads.empty() ? 0 : 1);
    mesh_.send(to, tag_of(kind::round, round, lane_, step_, mesh_.rank()), std::move(records));
    if (!payloads.empty())
      mesh_.send(to, tag_of(kind::payload, round, lane_, step_, mesh_.rank()), std::move(payloads));
  }

  /// The entries of a round's message that arrived whole, at most what its count says.
  std::size_t entries_in(const shm_mesh::transfer& t) const {
    if (t.length < header_bytes)
      return 0;
    return std::min<std::size_t>(get_u32(t.bytes.data()), (t.length - header_bytes) / entry_bytes);
  }

  /// The room for the payloads that follow `records`: what this rank expects of the positions it
  /// lists (a peer that sends more, a desync, has its payload message cut and its record read).
  std::size_t expected_payload_bytes(const shm_mesh::transfer& records) const {
    std::size_t total = 0;
    for (std::size_t j = 0; j < entries_in(records); ++j) {
      const std::size_t q = get_u32(records.bytes.data() + header_bytes + j * entry_bytes);
      if (q < group_.size())
        total += expected_[q];
    }
    return total;
  }

  /// Records what a round's messages brought; entries out of range are skipped (a record left zero
  /// reads as "not a collective's fingerprint" in the desync error), and a payload is kept only at
  /// the length expected of its position and within what arrived.
  void take(const shm_mesh::transfer& records, const shm_mesh::transfer* payloads) {
    std::size_t offset = 0;
    const std::size_t arrived = payloads && !payloads->failed ? payloads->length : 0;
    for (std::size_t j = 0; j < entries_in(records); ++j) {
      const std::byte* entry = records.bytes.data() + header_bytes + j * entry_bytes;
      const std::size_t q = get_u32(entry);
      const std::size_t length = get_u32(entry + 4);
      const std::size_t at = offset;
      offset = length > arrived || at > arrived - length ? arrived + 1 : at + length; // past the end: none fit
      if (q >= group_.size() || known_[q])
        continue;
      std::memcpy(out_.records.data() + q * fingerprint_bytes, entry + 8, fingerprint_bytes);
      known_[q] = true;
      if (length != 0 && length == expected_[q] && offset <= arrived)
        out_.payloads[q].assign(payloads->bytes.data() + at, payloads->bytes.data() + at + length);
    }
  }

  /// Waits for `incoming`, answering probes meanwhile. False when the check ends without it
  /// (out_ then says why).
  bool await(const std::shared_ptr<shm_mesh::transfer>& incoming) {
    auto next_idle = clock::now() + idle_every_;
    for (;;) {
      const auto until = idle_ ? std::min(deadline_, next_idle) : deadline_;
      const auto woke = mesh_.wait([&] { return incoming->done || control_->done; }, until);
      if (woke == shm_mesh::wake::aborted) {
        out_.error = std::make_exception_ptr(runtime_error("the check was aborted: " + mesh_.abort_reason()));
        return false;
      }
      if (!drain_control())
        return false;
      if (incoming->done)
        return true;
      const auto now = clock::now();
      if (now >= deadline_) {
        probe();
        return false;
      }
      if (idle_ && now >= next_idle) {
        next_idle = now + idle_every_;
        try {
          idle_();
        } catch (...) {
          out_.error = std::current_exception();
          return false;
        }
      }
    }
  }

  /// Handles every control message that has come (a reposted receive may match one waiting at
  /// once); false when one ends the check (a peer's verdict).
  bool drain_control() {
    while (control_->done)
      if (!answer_control())
        return false;
    return true;
  }

  /// Handles a control message that came; false when it ends the check (a peer's verdict).
  bool answer_control() {
    auto message = control_;
    post_control();
    if (message->failed || message->length < 1)
      return true;
    const int sender = sender_of(message->tag);
    switch (static_cast<control>(message->bytes[0])) {
      case control::probe:
        if (sender < mesh_.size() && sender != mesh_.rank())
          mesh_.send(sender, tag_of(kind::control, 0, lane_, step_, mesh_.rank()), control_message(control::present));
        return true;
      case control::present:
        if (auto q = position_of(sender))
          present_[*q] = true;
        return true;
      case control::verdict:
        out_.verdict.emplace(reinterpret_cast<const char*>(message->bytes.data() + 1), message->length - 1);
        return false;
    }
    return true;
  }

  std::optional<std::size_t> position_of(int rank) const {
    auto it = std::find(group_.begin(), group_.end(), rank);
    if (it == group_.end())
      return std::nullopt;
    return static_cast<std::size_t>(it - group_.begin());
  }

  /// This rank's time ran out: asks every peer whose record has not come whether it is at this
  /// step, and names those that do not answer within probe_window.
  void probe() {
    for (std::size_t q = 0; q < group_.size(); ++q)
      present_[q] = present_[q] || known_[q];
    for (std::size_t q = 0; q < group_.size(); ++q)
      if (!present_[q])
        mesh_.send(group_[q], tag_of(kind::control, 0, lane_, step_, mesh_.rank()), control_message(control::probe));
    const auto until = clock::now() + probe_window;
    auto all_answered = [&] { return std::all_of(present_.begin(), present_.end(), [](bool b) { return b; }); };
    while (!all_answered() && clock::now() < until) {
      const auto woke = mesh_.wait([&] { return control_->done; }, until);
      if (woke != shm_mesh::wake::ready || !drain_control())
        break;
    }
    if (out_.verdict)
      return;
    for (std::size_t q = 0; q < group_.size(); ++q)
      if (!present_[q])
        out_.missing.push_back(group_[q]);
    out_.error = std::make_exception_ptr(timeout_error("the check timed out"));
  }

  dissemination_outcome finish(const std::shared_ptr<shm_mesh::transfer>& pending) {
    mesh_.cancel(pending);
    mesh_.cancel(control_);
    return std::move(out_);
  }

  shm_mesh& mesh_;
  const std::vector<int>& group_;
  std::uint8_t lane_;
  std::uint64_t step_;
  clock::time_point deadline_;
  const std::function<void()>& idle_;
  std::chrono::milliseconds idle_every_;
  std::size_t position_ = 0;
  std::vector<bool> known_;
  std::vector<bool> present_;
  std::vector<std::size_t> expected_; // payload bytes by position
  std::shared_ptr<shm_mesh::transfer> control_;
  dissemination_outcome out_;
};

} // namespace

dissemination_outcome disseminate_fingerprints(shm_mesh& mesh, const std::vector<int>& group, std::uint8_t lane,
                                               std::uint64_t step, const fingerprint_record& mine,
                                               shm_mesh::clock::time_point deadline, const std::function<void()>& idle,
                                               std::chrono::milliseconds idle_every, dissemination_payload payload) {
  return check(mesh, group, lane, step, mine, deadline, idle, idle_every, std::move(payload)).run();
}

std::uint64_t dissemination_round_tag(unsigned round, std::uint8_t lane, std::uint64_t step, int sender) {
  return tag_of(kind::round, round, lane, step, sender);
}

std::uint64_t point_to_point_tag(point_to_point_message m, std::uint8_t lane, std::uint64_t step, int sender) {
  return tag_of(static_cast<kind>(m), 0, lane, step, sender);
}

std::uint64_t mesh_collective_tag(unsigned phase, std::uint8_t lane, std::uint64_t step, int sender) {
  return tag_of(kind::read_phase, phase, lane, step, sender);
}

std::uint64_t dissemination_payload_tag(unsigned round, std::uint8_t lane, std::uint64_t step, int sender) {
  return tag_of(kind::payload, round, lane, step, sender);
}

void send_verdict(shm_mesh& mesh, const std::vector<int>& group, std::uint8_t lane, std::uint64_t step,
                  const std::string& text) {
  for (int r : group)
    if (r != mesh.rank())
      mesh.send(r, tag_of(kind::control, 0, lane, step, mesh.rank()), control_message(control::verdict, text));
}

} // namespace am::detail
