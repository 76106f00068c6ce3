#pragma once

/// Everything a scheduler author needs, in one include: what the plugin uses (the SDK's base
/// class and params codec, the fusion IR, Braze's scheduling primitives and the analyses every
/// scheduler shares) and what a program that checks the plugin uses (define fusions and
/// evaluate them on the CPU, find the plugin through the scheduler registry and choose it by
/// name, generate its kernel, compile it with NVRTC for the device or a given architecture,
/// bind arguments and run it). sdk/README.md walks through a plugin and its check program
/// that include only this header.

// Defining fusions and evaluating them with the CPU reference evaluator.
#include "braze/braze.h"

// The plugin contract: the base class, the entry point macro, params as bytes.
#include "braze/sdk/param_codec.h"
#include "braze/sdk/plugin_abi.h"
#include "braze/sdk/scheduler_plugin.h"

// The IR a scheduler transforms, and what it may know of a run's arguments.
#include "braze/eval/argument_binding.h"
#include "braze/eval/strided_layout.h"
#include "braze/ir/iter_domain.h"
#include "braze/ir/tensor_view.h"
#include "braze/plugin/scheduler_runtime_info.h"

// Scheduling primitives and shared analyses.
#include "braze/sched/broadcast_reciprocals.h"
#include "braze/sched/device_info.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/logical_map.h"
#include "braze/sched/loop_map.h"
#include "braze/sched/outputs_problem.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/persistent_buffer.h"
#include "braze/sched/recompute.h"
#include "braze/sched/reduction_analysis.h"
#include "braze/sched/reference_dim_map.h"
#include "braze/sched/runtime_arguments.h"
#include "braze/sched/schedule_printer.h"
#include "braze/sched/transform_history.h"
#include "braze/sched/transform_propagation.h"
#include "braze/sched/unsupported_op_problem.h"
#include "braze/sched/vectorization.h"

// Finding plugins and choosing a scheduler.
#include "braze/plugin/scheduler_registry.h"

// From a scheduled fusion to a kernel that runs: code generation, NVRTC, the device, launch.
#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_properties.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/kernel_executor.h"
