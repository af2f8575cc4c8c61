// Which Hugging Face model classes (config.json `architectures[0]`, ModelSpec::hf_class) an
// engine loads, where the engine keeps a list of its own:
//   - ATOM: the keys of its model runner's support_model_arch_dict. Authoritative: any other class
//     is refused at load, so an ATOM plan for it would not start.
//   - TensorRT-LLM: the PyTorch backend's supported-models page. A hint: the AutoDeploy backend
//     may run other classes, so a plan is still made, with a note.
// vLLM and SGLang register (nearly) every family l2s reads, and their stored registries are older
// than several of those families: no list is kept for them, nor for Megatron-LM (a training
// framework that builds the model from its flags). The lists are transcribed from the engines'
// files at the commits named in model_classes.cc; scripts/engine_model_classes.py derives them.
#pragma once

#include <string>

#include "engine/engine.h"
#include "model/model.h"

namespace l2s::engine {

// False only when `id`'s workers keep an authoritative list (ATOM) that lacks the model's class;
// true for a model without a class (presets of synthetic models, configs without
// `architectures`) and for engines without a list.
bool LoadsModelClass(EngineId id, const ModelSpec& m);

// One line when the model's class is missing from `id`'s workers' list (authoritative or hint),
// naming the class, the list and its source; "" otherwise.
std::string ModelClassNote(EngineId id, const ModelSpec& m);

}  // namespace l2s::engine
