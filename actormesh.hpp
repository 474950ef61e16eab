/// The umbrella header: everything a user of actormesh includes.
#pragma once

#include "actors/buffer.hpp"
#include "actors/device_info.hpp"
#include "actors/dtype.hpp"
#include "actors/errors.hpp"
#include "actors/future.hpp"
#include "actors/lane.hpp"
#include "actors/program.hpp"
#include "devices/calls.hpp"
#include "devices/discovery.hpp"
#include "devices/options.hpp"
#include "devices/runtime.hpp"
