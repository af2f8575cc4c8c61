// Where `--model NAME` comes from, in this order:
//   1. a preset name (presets.h);
//   2. an existing path: a config.json, or a checkpoint directory holding one;
//   3. a HuggingFace repo id "org/name": the file "org--name.json" in one of the config folders
//      (../shared/models/hf relative to the working directory, then the one beside the source
//      tree), else the local HuggingFace hub cache, offline:
//      <hub>/models--org--name/snapshots/<revision>/config.json, the revision refs/main names
//      when that snapshot has a config.json, else the snapshot whose config.json is newest
//      (ties: the greatest revision name). <hub> is $HF_HUB_CACHE, else $HF_HOME/hub, else
//      $XDG_CACHE_HOME/huggingface/hub, else $HOME/.cache/huggingface/hub.
// Nothing is downloaded. A name found nowhere is NotFound, one line listing every place looked.
// A model loaded from a repo id is named by the repo id.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/model.h"

namespace l2s {

struct ModelSearchPaths {
  std::vector<std::string> config_dirs;  // folders of "org--name.json" files, in order
  std::string hf_hub_cache;              // "" = no HuggingFace cache
};

// The folders of the comment above, from the environment at the time of the call.
ModelSearchPaths DefaultModelSearchPaths();

// "org/name": two non-empty parts of [A-Za-z0-9._-] separated by one '/', neither part "." or
// "..", the whole at most 200 bytes (HuggingFace's repo id rules, a little looser).
bool LooksLikeRepoId(std::string_view s);

// The config.json of repo `repo_id` (which LooksLikeRepoId) as described above; NotFound when
// none. `looked` (may be null) receives every path tried, in order ("<dir>/snapshots/*/config.json"
// for the cache).
StatusOr<std::string> FindRepoConfig(std::string_view repo_id, const ModelSearchPaths& paths,
                                     std::vector<std::string>* looked);

// --draft-model ID as AttachDraftModel (model.h) attaches it, and, when ID names a config l2s can
// read - a .json file, a folder with config.json, or a repo id found as --model finds one - the
// draft's own shape from it (ModelSpec::draft_heads ...): num_attention_heads,
// num_key_value_heads (default: the heads), head_dim (default hidden / heads), intermediate_size,
// draft_vocab_size (else vocab_size). Its hidden_size must be the model's (an EAGLE-3 draft reads
// the model's hidden states). A config found but unreadable, incomplete or of another hidden size
// is InvalidArgument naming the file; none found keeps the rule of DraftLayerOf.
Status AttachDraftModelFrom(const std::string& id, const ModelSearchPaths& paths, ModelSpec* m);

// Loads a model as described above. With `warnings` non-null, also runs the input checks of
// config_lint.h (config keys and values for config files, the named size for every model) and
// appends their lines; the model is the same either way.
StatusOr<ModelSpec> LoadModelFrom(std::string_view name_or_path, const ModelSearchPaths& paths,
                                  std::vector<std::string>* warnings);

}  // namespace l2s
