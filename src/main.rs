fn main() {
    println!("vmscale");
}
