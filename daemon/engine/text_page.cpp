#include "engine/text_page.hpp"
