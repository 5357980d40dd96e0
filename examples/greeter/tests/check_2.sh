# Checkpoint 2: the command line, plain and shouted; greet() still works.
set -e
test "$(python3 greet.py Ada Grace)" = "$(printf 'Hello, Ada!\nHello, Grace!')"
test "$(python3 greet.py --shout Ada)" = "HELLO, ADA!"
python3 -c 'from greet import greet; assert greet("Bob") == "Hello, Bob!"'
echo "command_line: ok"
