// What a program around a documented fragment includes: the umbrella header and the standard
// headers the fragments use. Kept to what a user would write; a fragment that needs more of its
// own (fmt, say) gets it from its doc's context/<doc>.hpp.
#pragma once

#include <actormesh.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
