#include "actormesh/multihost/checkpoint.hpp"

#include "actormesh/devices/distributed.hpp"
#include "actormesh/devices/runtime.hpp"
#include "multihost/detail/global_value.hpp"
#include "multihost/detail/npy.hpp"
#include "multihost/detail/world_communicator.hpp"
#include "sharding/detail/block_copy.hpp"
#include "sharding/detail/block_writer_array.hpp"
#include "actormesh/sharding/make_array.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

namespace am::detail {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// The index's fields, each refused with am::value_error naming it when absent or of another type
/// (a damaged or hand-edited index.json).
const json& field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key))
    throw value_error(std::string("checkpoint index: missing field '") + key + "'");
  return j.at(key);
}
const std::string& text_of(const json& j, const char* what) {
  if (!j.is_string())
    throw value_error(std::string("checkpoint index: ") + what + " must be a string");
  return j.get_ref<const std::string&>();
}
std::int64_t integer_of(const json& j, const char* what) {
  if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())))
    throw value_error(std::string("checkpoint index: ") + what + " must be an integer");
  return j.get<std::int64_t>();
}
const json::array_t& list_of(const json& j, const char* what) {
  if (!j.is_array())
    throw value_error(std::string("checkpoint index: ") + what + " must be an array");
  return j.get_ref<const json::array_t&>();
}

const char* const index_name = "index.json";
const char* const format_name = "actormesh checkpoint";

/// `0-4_0-2` for the block [0:4, 0:2]; `scalar` for a 0-d array.
std::string block_name(const shard_index& index) {
  if (index.empty())
    return "scalar";
  std::string out;
  for (std::size_t d = 0; d < index.size(); ++d)
    out += (d ? "_" : "") + std::to_string(index[d].start) + "-" + std::to_string(index[d].stop);
  return out;
}

shard_index whole(const std::vector<std::int64_t>& shape) {
  shard_index out;
  for (auto e : shape)
    out.push_back({0, e});
  return out;
}

/// A block of one leaf: where it is in the array, who writes it, and from which device.
struct block_plan {
  shard_index index;
  int writer = 0;     ///< process
  int device_id = -1; ///< -1: the host value itself
};

/// The distinct blocks of a leaf, each with its writer (the process of the lowest-id device
/// holding it; process 0 for host values).
std::vector<block_plan> plan_blocks(const tree_leaf& leaf) {
  if (std::holds_alternative<host_array>(leaf))
    return {{whole(std::get<host_array>(leaf).shape()), 0, -1}};
  const auto& x = std::get<array>(leaf);
  std::vector<block_plan> out;
  std::map<std::string, bool> seen;
  for (auto& pl : x.sharding()->shard_placements(x.shape()))
    if (seen.emplace(block_name(pl.index), true).second)
      out.push_back({pl.index, pl.device.process_index, pl.device.id});
  return out;
}

host_array block_data(const tree_leaf& leaf, const block_plan& b) {
  if (b.device_id < 0)
    return std::get<host_array>(leaf);
  const auto& x = std::get<array>(leaf);
  for (auto& s : x.addressable_shards())
    if (s.device.id == b.device_id) {
      // A CPU device's buffer is host memory: written straight from it (buffers are immutable once
      // produced), without a copy.
      const buffer_ref& buf = s.data.get();
      if (buf->host_accessible()) {
        std::shared_ptr<std::byte> bytes(buf, static_cast<std::byte*>(buf->data()));
        return host_array::from_shared_bytes(bytes, buf->byte_size(), x.dtype(), buf->shape());
      }
      return shard_data(x, s).to_host();
    }
  throw runtime_error("save_checkpoint: the block " + to_string(b.index) + " is not on this process");
}

/// Every process's outcome of one step ("" when it went well): the first failure, naming its
/// process, is thrown on every process.
void agree_on_outcome(const std::string& what, const std::string& my_error) {
  std::vector<std::string> errors{my_error};
  if (process_count() > 1) {
    auto& comm = world_communicator();
    std::int64_t mine = my_error.empty() ? 0 : 1;
    std::vector<std::int64_t> all(static_cast<std::size_t>(comm.size()));
    comm.all_gather(&mine, all.data(), 1, dtype::int64);
    for (std::size_t r = 0; r < all.size(); ++r)
      if (all[r] != 0 && static_cast<int>(r) != comm.rank())
        throw runtime_error(what + ": process " + std::to_string(comm.processes()[r]) + " failed (see its own error)");
  }
  if (!my_error.empty())
    throw runtime_error(what + ": process " + std::to_string(process_index()) + " failed: " + my_error);
}

json shape_json(const std::vector<std::int64_t>& shape) {
  json::array_t a;
  for (auto e : shape)
    a.emplace_back(e);
  return a;
}

std::vector<std::int64_t> ints(const json& j, const char* what) {
  std::vector<std::int64_t> out;
  for (auto& e : list_of(j, what))
    out.push_back(integer_of(e, what));
  return out;
}

void write_text(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out)
      throw runtime_error("Cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The part of `src` (holding `src_index` of the array) that falls inside `dst_index`, copied into
/// `dst` (holding `dst_index`); nothing when they do not meet.
void copy_overlap(const host_array& src, const shard_index& src_index, const host_array& dst, const shard_index& dst_index) {
  std::vector<host_array::slice_spec> take;
  shard_index put;
  for (std::size_t d = 0; d < src_index.size(); ++d) {
    const auto lo = std::max(src_index[d].start, dst_index[d].start);
    const auto hi = std::min(src_index[d].stop, dst_index[d].stop);
    if (lo >= hi)
      return;
    take.push_back({lo - src_index[d].start, hi - src_index[d].start, 1});
    put.push_back({lo - dst_index[d].start, hi - dst_index[d].start});
  }
  insert_block(dst, put, src_index.empty() ? src : src.slice(take));
}

/// The files of one leaf that restore reads whole (those that are not exactly one shard), each read
/// once, by whichever device needs it first; the devices' writers share it.
class saved_files {
public:
  /// The file at `path` (holding `type` and `shape`), read now unless it was already.
  host_array read(const std::string& path, am::dtype type, const std::vector<std::int64_t>& shape) {
    std::lock_guard<std::mutex> hold(mutex_);
    auto it = files_.find(path);
    if (it == files_.end())
      it = files_.emplace(path, read_npy(path, type, shape)).first;
    return it->second;
  }

private:
  std::mutex mutex_;
  std::map<std::string, host_array> files_;
};

} // namespace

void save_checkpoint_leaves(const std::string& directory, const data_tree& tree) {
  const fs::path dir(directory);
  const int me = process_index();
  std::string error;
  // Process 0 prepares the directory: an earlier index goes first, so a torn save never looks complete.
  if (me == 0) {
    try {
      fs::create_directories(dir);
      fs::remove(dir / index_name);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  agree_on_outcome("save_checkpoint (preparing " + directory + ")", error);
  json::array_t leaves;
  try {
    for (std::size_t k = 0; k < tree.leaves.size(); ++k) {
      // In a cluster, an array on one process's devices is that process's own value, like a
      // host value: process 0 writes its copy.
      const tree_leaf leaf = process_count() > 1 && !is_global_non_addressable(tree.leaves[k])
                                 ? tree_leaf(leaf_on_host(tree.leaves[k]))
                                 : tree.leaves[k];
      json::array_t blocks;
      for (auto& b : plan_blocks(leaf)) {
        const std::string file = std::to_string(k) + "/" + block_name(b.index) + ".npy";
        json::array_t start, stop;
        for (auto& r : b.index) {
          start.emplace_back(r.start);
          stop.emplace_back(r.stop);
        }
        json::object_t entry;
        entry["file"] = file;
        entry["start"] = std::move(start);
        entry["stop"] = std::move(stop);
        entry["process"] = b.writer;
        blocks.emplace_back(std::move(entry));
        if (b.writer != me)
          continue;
        fs::create_directories(dir / std::to_string(k));
        write_npy((dir / file).string(), block_data(leaf, b));
      }
      const bool is_host = std::holds_alternative<host_array>(leaf);
      const auto type = is_host ? std::get<host_array>(leaf).dtype() : std::get<array>(leaf).dtype();
      const auto& shape = is_host ? std::get<host_array>(leaf).shape() : std::get<array>(leaf).shape();
      json::object_t entry;
      entry["dtype"] = std::string(am::name(type));
      entry["shape"] = shape_json(shape);
      entry["npy_descr"] = npy_descr(type);
      entry["blocks"] = std::move(blocks);
      leaves.emplace_back(std::move(entry));
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_on_outcome("save_checkpoint (writing the blocks)", error);
  if (me == 0) {
    try {
      json::object_t index;
      index["format"] = format_name;
      index["version"] = 1;
      index["treedef"] = tree.def.to_string();
      index["processes"] = process_count();
      index["leaves"] = std::move(leaves);
      write_text(dir / index_name, json(std::move(index)).dump() + "\n");
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  agree_on_outcome("save_checkpoint (writing the index)", error);
}

std::vector<array> restore_checkpoint_leaves(const std::string& directory, const tree_def& def,
                                  const std::vector<sharding_ptr>& shardings) {
  const fs::path dir(directory);
  if (!fs::exists(dir / index_name))
    throw value_error("restore_checkpoint: " + directory + " holds no complete checkpoint (" + index_name
                      + " is missing: its save did not finish)");
  json index = json::parse(read_text(dir / index_name), nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded())
    throw value_error("restore_checkpoint: " + (dir / index_name).string() + " is not valid JSON");
  if (text_of(field(index, "format"), "format") != format_name || integer_of(field(index, "version"), "version") != 1)
    throw value_error("restore_checkpoint: " + directory + " holds another format than " + format_name + " 1");
  if (text_of(field(index, "treedef"), "treedef") != def.to_string())
    throw value_error("restore_checkpoint: the checkpoint holds a tree of structure "
                      + text_of(field(index, "treedef"), "treedef") + ", but the shardings have structure "
                      + def.to_string());
  const auto& leaves = list_of(field(index, "leaves"), "leaves");
  std::vector<array> out;
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const auto& leaf = leaves[k];
    const auto shape = ints(field(leaf, "shape"), "shape");
    const std::string dtype_name = text_of(field(leaf, "dtype"), "dtype");
    std::optional<am::dtype> type;
    for (std::size_t t = 0; t < dtype_count; ++t)
      if (am::name(static_cast<am::dtype>(t)) == dtype_name)
        type = static_cast<am::dtype>(t);
    if (!type)
      throw value_error("restore_checkpoint: unknown dtype " + dtype_name);
    struct saved {
      std::string file;
      shard_index index;
    };
    std::vector<saved> blocks;
    std::int64_t covered = 0;
    for (auto& b : list_of(field(leaf, "blocks"), "blocks")) {
      auto start = ints(field(b, "start"), "start"), stop = ints(field(b, "stop"), "stop");
      if (start.size() != shape.size() || stop.size() != shape.size())
        throw value_error("restore_checkpoint: a block of leaf " + std::to_string(k) + " has the wrong rank");
      shard_index idx;
      std::int64_t n = 1;
      for (std::size_t d = 0; d < shape.size(); ++d) {
        if (start[d] < 0 || stop[d] > shape[d] || start[d] > stop[d])
          throw value_error("restore_checkpoint: a block of leaf " + std::to_string(k) + " lies outside its shape");
        idx.push_back({start[d], stop[d]});
        n *= stop[d] - start[d];
      }
      covered += n;
      blocks.push_back({text_of(field(b, "file"), "file"), std::move(idx)});
    }
    if (covered != element_count(shape))
      throw value_error("restore_checkpoint: the blocks of leaf " + std::to_string(k) + " do not cover its shape");
    auto files = std::make_shared<saved_files>();
    auto file_of = [dir](const saved& b) { return (dir / b.file).string(); };
    out.push_back(make_array_from_block_writer(
      shape, *type, shardings[k],
      [blocks = std::move(blocks), files, file_of, type = *type](const shard_index& want, std::byte* destination,
                                                                  std::size_t size) {
        // A file that holds exactly this shard goes straight into the shard's memory.
        for (auto& b : blocks)
          if (b.index == want) {
            read_npy_into(file_of(b), type, extents(want), destination, size);
            return;
          }
        // Otherwise the shard is pieced together from the files it meets, each read whole once.
        const host_array shard_view = host_array::from_shared_bytes(
          std::shared_ptr<std::byte>(std::shared_ptr<void>(), destination), size, type, extents(want));
        for (auto& b : blocks) {
          bool meets = true;
          for (std::size_t d = 0; d < want.size(); ++d)
            meets = meets && std::max(b.index[d].start, want[d].start) < std::min(b.index[d].stop, want[d].stop);
          if (meets || want.empty())
            copy_overlap(files->read(file_of(b), type, extents(b.index)), b.index, shard_view, want);
        }
      }));
  }
  // The devices read concurrently; their errors (a missing or damaged file) surface here, as the
  // call's own.
  for (auto& restored : out)
    restored.block_until_ready();
  return out;
}

} // namespace am::detail

namespace am::multihost {

bool checkpoint_exists(const std::string& directory) {
  return std::filesystem::exists(std::filesystem::path(directory) / "index.json");
}

} // namespace am::multihost
