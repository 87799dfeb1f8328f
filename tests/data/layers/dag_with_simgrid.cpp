// Fixture for the layer check: a file of src/dag/ that includes SimGrid and the engine (both forbidden there).
#include "engine/simulation.hpp"
#include <simgrid/s4u/Engine.hpp>
