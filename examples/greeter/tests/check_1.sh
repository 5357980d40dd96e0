# Checkpoint 1: greet() returns the greeting.
set -e
python3 -c 'from greet import greet; assert greet("Ada") == "Hello, Ada!", greet("Ada")'
echo "greet_function: ok"
