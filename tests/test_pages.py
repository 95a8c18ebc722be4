def test_it_serves_the_home_page_and_the_api_schema(client, db):
    assert "Keeping Time" in client.get("/").content.decode()
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"Keeping Time API" in schema.content
